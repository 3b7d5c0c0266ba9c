import { checkKeys, describeValue, fail, TTL_SECONDS, wholeNumber } from '../../shared/check.js';

/** One delivery's hold on a push while its callback runs: it lapses unless renewed. */
export interface DedupLease {
  /** Unique per delivery: only its holder renews or releases it. */
  readonly id: string;
  /** How long the hold lasts from now unless renewed, in milliseconds (the handler's `dedupLeaseMs`). */
  readonly ms: number;
}

/**
 * What a store knows of a push: `claimed` this delivery now holds its lease and runs the
 * callback; `running` another delivery holds a live lease; `done` it was processed.
 */
export type DedupState = 'claimed' | 'running' | 'done';

/**
 * Remembers pushes processed, so that a push delivered twice (or to two instances) runs the
 * callback once, and never acknowledges a repeat before one delivery has really been processed.
 * Each call touches the one key, so a store on a sharded or clustered database works.
 */
export interface WebhookDedupStore {
  /**
   * Atomically: `done` when `key` is marked processed; `running` while another delivery's lease
   * on it is live; otherwise takes a lease on it (`lease.id` for `lease.ms`) and answers `claimed`.
   */
  claim(key: string, lease: DedupLease): DedupState | Promise<DedupState>;
  /** Extends this delivery's lease by `lease.ms` while the callback runs; false when it is no longer this delivery's. */
  renew(key: string, lease: DedupLease): boolean | Promise<boolean>;
  /** The callback succeeded: marks `key` processed (for the store's ttl), whoever holds its lease now. */
  complete(key: string, lease: DedupLease): void | Promise<void>;
  /** The callback failed: drops the lease if it is still this delivery's, so a redelivery is processed at once. */
  release(key: string, lease: DedupLease): void | Promise<void>;
}

/** Options of {@link createMemoryDedupStore}. */
export interface MemoryDedupStoreOptions {
  /** How long a processed push is remembered. @default 86400 (one day) */
  ttlSeconds?: number;
  /** Most processed keys kept; the oldest go first. @default 100000 (about 15 MB) */
  maxEntries?: number;
}

/**
 * A {@link WebhookDedupStore} in this process's memory: enough for one instance. Several
 * instances behind a load balancer need a shared one (`createRedisDedupStore`).
 * @example
 * createWebhookHandler({ secret, dedup: createMemoryDedupStore({ ttlSeconds: 3600 }), onLogisticsUpdated });
 */
export function createMemoryDedupStore(options: MemoryDedupStoreOptions = {}): WebhookDedupStore {
  const o = options || {};
  checkKeys(o, ['ttlSeconds', 'maxEntries'], 'createMemoryDedupStore option', { ttl: 'ttlSeconds', max: 'maxEntries' });
  const ttlSeconds = wholeNumber('ttlSeconds', o.ttlSeconds ?? TTL_SECONDS.example, TTL_SECONDS.min, TTL_SECONDS.max, 'seconds', TTL_SECONDS.example);
  const maxEntries = wholeNumber('maxEntries', o.maxEntries ?? 100_000, 1, Number.MAX_SAFE_INTEGER, 'pushes', 100_000);
  // Processed keys share one TTL, so insertion order is expiry order: expired keys are always at
  // the front. Leases live apart: they are few (pushes in flight) and of their own lengths.
  const done = new Map<string, number>();
  const leases = new Map<string, { id: string; until: number }>();
  const live = (key: string, now: number) => {
    const held = leases.get(key);
    if (held && held.until <= now) leases.delete(key);
    return held && held.until > now ? held : undefined;
  };
  return {
    claim(key, lease) {
      const now = Date.now();
      for (const [oldest, expires] of done) {
        if (expires > now) break;
        done.delete(oldest);
      }
      if (done.has(key)) return 'done';
      if (live(key, now)) return 'running';
      // Leases of holders that went away without releasing: swept when they pile up.
      if (leases.size >= 1024) for (const k of leases.keys()) live(k, now);
      leases.set(key, { id: lease.id, until: now + lease.ms });
      return 'claimed';
    },
    renew(key, lease) {
      const now = Date.now();
      const held = live(key, now);
      if (!held || held.id !== lease.id) return false;
      held.until = now + lease.ms;
      return true;
    },
    complete(key) {
      leases.delete(key);
      done.delete(key);
      if (done.size >= maxEntries) done.delete(done.keys().next().value as string);
      done.set(key, Date.now() + ttlSeconds * 1000);
    },
    release(key, lease) {
      if (leases.get(key)?.id === lease.id) leases.delete(key);
    },
  };
}

/** The methods a store needs; a store of the earlier interface (claim and release only) is named as such. */
export function checkDedupStore(dedup: unknown): asserts dedup is WebhookDedupStore {
  const store = dedup as Record<string, unknown> | null;
  const has = (name: string) => typeof store?.[name] === 'function';
  if (has('claim') && has('release') && !has('renew') && !has('complete')) {
    fail(
      'dedup: this store has claim(key) and release(key) only, the interface before leases: with it a push whose first delivery crashed, or failed after the 8-second window, was acknowledged as a duplicate and never processed. ' +
        "Add renew(key, lease) and complete(key, lease), and make claim(key, lease) answer 'claimed', 'running' or 'done' (see docs/guide/webhooks.md, \"Your own store\"), or use createMemoryDedupStore() / createRedisDedupStore(redis)",
    );
  }
  const missing = ['claim', 'renew', 'complete', 'release'].filter((name) => !has(name));
  if (missing.length) {
    fail(
      'dedup must be a store with claim, renew, complete and release (e.g. createMemoryDedupStore()); ' +
        describeValue(dedup) +
        ' has no ' +
        missing.join(', '),
    );
  }
}
