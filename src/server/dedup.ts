/** Remembers pushes already handled, so a push delivered twice (or to two instances) runs the callback once. */
export interface WebhookDedupStore {
  /** Atomically claims `key` (the push's dedupKey). true: this caller got it (first delivery); false: already claimed (in progress or done). */
  claim(key: string): boolean | Promise<boolean>;
  /** Gives a claim back after the callback failed, so a redelivery is processed. */
  release(key: string): void | Promise<void>;
}
