// The inbox's public shapes: what the webhook handler hands an inbox (any queue: Redis Streams,
// BullMQ, a database outbox), and what the Redis inbox's workers, stats and dead letters look like.
import type { LogisticsUpdatedEvent, UnknownWebhookEvent } from '../../../schemas/logistics.js';

/** A verified, well-formed push, as the webhook handler hands it to an inbox. */
export interface InboxPush {
  /** `dedupKey(rawBody)`: SHA-256 (hex) of the raw body, the same for a repeated push. */
  readonly key: string;
  /** The raw body as UTF-8 text (the JSON exactly as received, less a leading BOM). */
  readonly body: string;
  /** The raw body as received. */
  readonly rawBody: Uint8Array;
  /** The event type: `logistics.updated`, or another the service may add. */
  readonly event: string;
  /** `logistics.order_no`, for `logistics.updated`. */
  readonly orderNo?: string;
  /** The newest `events[].time` or `shipped_at` of the snapshot, in epoch ms (`latestEventTime`); absent when it has none. */
  readonly snapshotAt?: number;
  /** When the handler received it, in epoch ms. */
  readonly receivedAt: number;
}

/**
 * What an inbox answers the handler: `stored` (or nothing) once the push is durably stored,
 * `duplicate` when this push is already stored (queued, processed or dead-lettered).
 */
export type InboxAppendResult = 'stored' | 'duplicate' | void;

/**
 * Where `createWebhookHandler({ secret, inbox })` puts each verified push before it answers 2xx:
 * `createRedisInbox(redis)`, or your own queue (BullMQ, a database outbox). The handler answers
 * 2xx only after `append` resolved, and 503 when it rejects or does not answer within the
 * handler's `inboxTimeoutMs`, so a push is acknowledged only once it is stored.
 */
export interface WebhookInbox {
  /** Stores the push durably; resolves once it is stored. Rejects when it could not be. */
  append(push: InboxPush): Promise<InboxAppendResult>;
}

/** What an inbox callback receives besides the event. */
export interface InboxContext {
  /** The entry's id in the inbox (a Redis Streams id); a retry has a new one. */
  readonly id: string;
  /** This run's number, from 1; above 1 after a failure or a worker that died mid-callback. */
  readonly attempt: number;
  /** `dedupKey(rawBody)` of the push. */
  readonly dedupKey: string;
  /** When the webhook handler stored it, in epoch ms. */
  readonly receivedAt: number;
  /** Aborted when the callback passes `callbackTimeoutMs` (the push is then retried). */
  readonly signal: AbortSignal;
}

/** Where a worker stopped, for `onError`. */
export interface InboxErrorInfo {
  /**
   * `callback` threw (retried with backoff); `timeout` ran past `callbackTimeoutMs` (retried; the
   * call itself may still be running); `dead-letter` failed `maxAttempts` times and was put aside;
   * `stale` older than a snapshot of its order already processed, so skipped (info); `lease` this
   * worker's lease on a push lapsed while its callback ran (another worker may run it too);
   * `redis` a Redis call failed or was slow (the worker retries); `data-lost` Redis lost what the
   * inbox stored: its consumer group vanished (restarted without persistence, flushed, failed over
   * to an empty replica), or a push waiting for a retry was evicted (then `id` names its dead
   * letter); `memory` Redis's memory settings put pushes at risk (an evicting `maxmemory-policy`:
   * error), Redis is nearly full, or Redis would not tell its policy (INFO refused) (warn), checked
   * when the worker starts and every minute.
   */
  stage: 'callback' | 'timeout' | 'dead-letter' | 'stale' | 'lease' | 'redis' | 'data-lost' | 'memory';
  /** `info` needs nothing done; `warn` retried or recovered; `error` something to look at. */
  level: 'info' | 'warn' | 'error';
  /**
   * The entry's id, when the report is about one push. For `dead-letter` and `data-lost`: the dead
   * letter's id, what `inbox.replay(id)`, `inbox.discard(id)` and `channel-sandbox inbox replay <id>` take.
   */
  id?: string;
  /** The push's order, when it has one. */
  orderNo?: string;
  /** The run's number, for `callback`, `timeout` and `dead-letter`. */
  attempt?: number;
}

/** Options of `inbox.process(...)`. */
export interface InboxProcessOptions {
  /** Called for each `logistics.updated` push. A throw (or a rejected promise) is a failed attempt: retried with backoff. */
  onLogisticsUpdated: (event: LogisticsUpdatedEvent, context: InboxContext) => unknown;
  /** Called for any other event type; without it such pushes are acknowledged and dropped. */
  onEvent?: (event: UnknownWebhookEvent, context: InboxContext) => unknown;
  /** Callbacks this worker runs at once. @default 1 */
  concurrency?: number;
  /**
   * Failures, retries, dead letters, lapsed leases, Redis errors.
   * @default `warn` and `error` levels to console.warn / console.error, one line
   */
  onError?: (error: unknown, info: InboxErrorInfo) => void;
}

/** A running worker: `await worker.close()` on shutdown. */
export interface InboxWorker {
  /**
   * Stops taking pushes, waits for the callbacks running to finish and their outcome to be
   * stored, then resolves. A callback past `callbackTimeoutMs` is not waited for.
   */
  close(): Promise<void>;
  /**
   * Stops taking pushes (those running finish and their outcome is stored) until `resume()`: during
   * a deploy or while what the callback writes to is down. `inbox.pause()` pauses every worker.
   */
  pause(): void;
  /** Takes pushes again after `pause()`. */
  resume(): void;
  /** True between `pause()` and `resume()` (not for `inbox.pause()`: see `stats().paused`). */
  readonly paused: boolean;
  /** Callbacks running now. */
  readonly running: number;
}

/** Redis's memory, from INFO memory. */
export interface InboxMemory {
  /** `used_memory`: bytes Redis holds now. */
  usedBytes: number;
  /** `maxmemory`: its limit in bytes, 0 for none. */
  maxBytes: number;
  /** `maxmemory_policy`: what Redis does when full; the inbox needs `noeviction`. */
  policy: string;
}

/** `inbox.stats()`. */
export interface InboxStats {
  /** Pushes stored and not yet taken by a worker. */
  pending: number;
  /** Pushes a worker holds now (running, or its worker died and the lease has not lapsed yet). */
  processing: number;
  /** Pushes waiting for their next attempt (backoff), or for another push of their order to finish. */
  retrying: number;
  /** Pushes that failed `maxAttempts` times, kept for `replay()`. */
  deadLetters: number;
  /**
   * Age in ms of the oldest push stored and not processed yet, pending, processing or retrying
   * (0 when none); dead letters do not count. The number to alert on: it grows while pushes wait.
   */
  oldestMs: number;
  /** Workers (`inbox.process`) seen in the last minute, paused ones included. */
  workers: number;
  /** True while `inbox.pause()` holds every worker. */
  paused: boolean;
  /** Redis's memory (INFO memory); absent when Redis refuses INFO (workers then warn, stage `memory`: the policy is unchecked). */
  memory?: InboxMemory;
}

/** A dead letter, as `inbox.deadLetters()` lists it (the body is not included). */
export interface DeadLetter {
  /** Its id in the dead-letter stream: `inbox.replay(id)`, `inbox.discard(id)`. */
  id: string;
  /** `dedupKey` of the push. */
  key: string;
  orderNo?: string;
  /** Attempts made. */
  attempts: number;
  /** The last attempt's error message. */
  error: string;
  /** When it was put aside, and when the handler stored it (epoch ms; 0 when Redis lost the push). */
  failedAt: number;
  receivedAt: number;
}
