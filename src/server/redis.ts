// Redis adapters over the user's own client: ioredis (v5, v6) or node-redis (`redis` v4 to v6).
// No client is bundled: the adapters call the few methods both clients have, in each one's style.
import { checkKeys, TTL_SECONDS, wholeNumber } from '../shared/check.js';
import type { DedupState, WebhookDedupStore } from './webhooks/dedup.js';
import type { CachedToken, TokenCache, TokenCacheLock } from './tokens/token-cache.js';

import { checkPrefix, commandsFor, type RedisClient } from './redis-client.js';
import type { Crypto } from './crypto/crypto.js';

export type { IoRedisClient, NodeRedisClient, RedisClient } from './redis-client.js';

/** Options of {@link createRedisTokenCache}. */
export interface RedisTokenCacheOptions {
  /** Put before every key (tokens under `<prefix><key>`, locks under `<prefix>lock:<key>`). @default 'channel-sdk:token:' */
  prefix?: string;
}

/** Options of {@link createRedisDedupStore}. */
export interface RedisDedupStoreOptions {
  /** Put before every key. @default 'channel-sdk:webhook:' */
  prefix?: string;
  /** How long a processed push is remembered, in seconds. @default 86400 (a day) */
  ttlSeconds?: number;
}

/** `createRedisTokenCache` (its JSDoc: src/server.ts), with `crypto` for its lock owners' ids. */
export function redisTokenCache(
  crypto: Pick<Crypto, 'randomId'>,
  redis: RedisClient,
  options: RedisTokenCacheOptions = {},
): TokenCache & Required<Pick<TokenCache, 'lock' | 'connecting'>> {
  const what = 'createRedisTokenCache(redis, options)';
  const commands = commandsFor(redis, what);
  checkKeys(options || {}, ['prefix'], what + ' option', { keyprefix: 'prefix' });
  const prefix = checkPrefix(what, (options || {}).prefix, 'channel-sdk:token:');
  const whole = (ms: number) => Math.max(1, Math.floor(ms));
  return {
    async get(key) {
      const raw = await commands.get(prefix + key);
      return raw === null ? undefined : (JSON.parse(raw) as CachedToken);
    },
    async set(key, value, ttlMs) {
      await commands.setPx(prefix + key, JSON.stringify(value), whole(ttlMs), false);
    },
    async lock(key, ttlMs): Promise<TokenCacheLock | undefined> {
      const lockKey = prefix + 'lock:' + key;
      const owner = crypto.randomId();
      if (!(await commands.setPx(lockKey, owner, whole(ttlMs), true))) return undefined;
      return {
        release: () => commands.deleteIfEquals(lockKey, owner),
        renew: async (ms) => (await commands.script(RENEW_IF_EQUALS, lockKey, owner, String(whole(ms)))) === '1',
      };
    },
    connecting: () => commands.connecting(),
  };
}

// Extends KEYS[1] by ARGV[2] ms while it holds ARGV[1]: 1, else 0 (a token lock, a dedup lease).
const RENEW_IF_EQUALS = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

// The dedup scripts: each reads and writes the one key, so they run on a Redis Cluster as is.
// A key holds `lease:<id>` while a delivery runs the callback (PX: it lapses unless renewed), then
// `1` once processed (EX ttl). `1` is also what versions before leases wrote, read as processed.
const CLAIM =
  "local v = redis.call('get', KEYS[1]) " +
  "if not v then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 'claimed' end " +
  "if string.sub(v, 1, 6) == 'lease:' then return 'running' end return 'done'";
const DONE = '1';

/**
 * A webhook dedup store on your Redis, shared by every instance: a delivery takes a short lease
 * on the push (`SET <prefix><dedupKey> lease:<id> PX <dedupLeaseMs>`, in one script with the
 * check), renews it while the callback runs, and marks the push processed (`SET … 1 EX
 * <ttlSeconds>`) only after the callback succeeded; a failed callback drops its lease. Every
 * command touches one key, so a Redis Cluster client (ioredis `Cluster`, node-redis
 * `createCluster`) works as it is.
 * @example
 * createWebhookHandler({ secret, dedup: createRedisDedupStore(redis), onLogisticsUpdated });
 */
export function createRedisDedupStore(redis: RedisClient, options: RedisDedupStoreOptions = {}): WebhookDedupStore {
  const what = 'createRedisDedupStore(redis, options)';
  const commands = commandsFor(redis, what);
  const o = options || {};
  checkKeys(o, ['prefix', 'ttlSeconds'], what + ' option', { ttl: 'ttlSeconds', keyprefix: 'prefix' });
  const prefix = checkPrefix(what, o.prefix, 'channel-sdk:webhook:');
  const ttlSeconds = wholeNumber(what + ': ttlSeconds', o.ttlSeconds ?? TTL_SECONDS.example, TTL_SECONDS.min, TTL_SECONDS.max, 'seconds', TTL_SECONDS.example);
  const ms = (lease: { ms: number }) => String(Math.max(1, Math.ceil(lease.ms)));
  return {
    async claim(key, lease) {
      const state = await commands.script(CLAIM, prefix + key, 'lease:' + lease.id, ms(lease));
      return state as DedupState;
    },
    renew: async (key, lease) => (await commands.script(RENEW_IF_EQUALS, prefix + key, 'lease:' + lease.id, ms(lease))) === '1',
    complete: (key) => commands.setEx(prefix + key, DONE, ttlSeconds),
    release: (key, lease) => commands.deleteIfEquals(prefix + key, 'lease:' + lease.id),
  };
}
