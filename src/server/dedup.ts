import { ConfigError } from '../errors/ConfigError.js';

/** Remembers pushes already handled, so a push delivered twice (or to two instances) runs the callback once. */
export interface WebhookDedupStore {
  /** Atomically claims `key` (the push's dedupKey). true: this caller got it (first delivery); false: already claimed (in progress or done). */
  claim(key: string): boolean | Promise<boolean>;
  /** Gives a claim back after the callback failed, so a redelivery is processed. */
  release(key: string): void | Promise<void>;
}

/** Options of {@link createMemoryDedupStore}. */
export interface MemoryDedupStoreOptions {
  /** How long a handled push is remembered. @default 86400 (one day) */
  ttlSeconds?: number;
  /** Most keys kept; the oldest go first. @default 100000 (about 15 MB) */
  maxEntries?: number;
}

/**
 * A {@link WebhookDedupStore} in this process's memory: enough for one instance. Several
 * instances behind a load balancer need a shared one (`createRedisDedupStore`).
 * @example
 * createWebhookHandler({ secret, dedup: createMemoryDedupStore({ ttlSeconds: 3600 }), onLogisticsUpdated });
 */
export function createMemoryDedupStore(options: MemoryDedupStoreOptions = {}): WebhookDedupStore {
  const { ttlSeconds = 86400, maxEntries = 100000 } = options;
  if (!(ttlSeconds > 0)) throw new ConfigError('ttlSeconds must be a positive number of seconds');
  if (!(maxEntries >= 1)) throw new ConfigError('maxEntries must be at least 1');
  // One TTL for all, so insertion order is expiry order: expired keys are always at the front.
  const until = new Map<string, number>();
  return {
    claim(key) {
      const now = Date.now();
      for (const [oldest, expires] of until) {
        if (expires > now) break;
        until.delete(oldest);
      }
      if (until.has(key)) return false;
      if (until.size >= maxEntries) until.delete(until.keys().next().value as string);
      until.set(key, now + ttlSeconds * 1000);
      return true;
    },
    release(key) {
      until.delete(key);
    },
  };
}
