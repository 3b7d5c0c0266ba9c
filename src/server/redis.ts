// Redis adapters over the user's own client: ioredis (v5, v6) or node-redis (`redis` v4 to v6).
// No client is bundled: the adapters call the few methods both clients have, in each one's style.
import { checkKeys, describeValue } from '../shared/check.js';
import { ConfigError } from '../errors/ConfigError.js';
import type { DedupState, WebhookDedupStore } from './webhooks/dedup.js';
import type { StoredToken, TokenCache, TokenCacheLock } from './tokens/token-cache.js';

// The clients' own typings are elaborate overloads (node-redis 4's SET options are a union that no
// simpler type matches), so the public types only say which methods must be there; the calls
// below use each client's documented argument style.
type Method = (...args: never[]) => unknown;

/** An ioredis client (`new Redis()` or `new Redis.Cluster()`, v5 or v6): the methods the adapters use. */
export interface IoRedisClient {
  status: string;
  get: Method;
  set: Method;
  del: Method;
  eval: Method;
}

/** A node-redis client (`createClient()` of `redis` v4, v5 or v6, connected): the methods the adapters use. */
export interface NodeRedisClient {
  readonly isOpen: boolean;
  get: Method;
  set: Method;
  del: Method;
  eval: Method;
}

/** How the adapters call an ioredis client. */
interface IoRedisCalls {
  status: string;
  /** With `lazyConnect`, a client in status `wait` connects when asked (or at its first command). */
  connect?(): Promise<unknown>;
  once?(event: string, listener: () => void): unknown;
  removeListener?(event: string, listener: () => void): unknown;
  get(key: string): Promise<unknown>;
  set(key: string, value: string, ...options: Array<string | number>): Promise<unknown>;
  del(key: string): Promise<unknown>;
  eval(script: string, numberOfKeys: number, ...keysAndArguments: string[]): Promise<unknown>;
}

/** How the adapters call a node-redis client. */
interface NodeRedisCalls {
  isOpen: boolean;
  isReady?: boolean;
  get(key: string): Promise<unknown>;
  set(key: string, value: string, options: { PX?: number; EX?: number; NX?: true }): Promise<unknown>;
  del(key: string): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /** A cluster's (createCluster) raw command, routed by `firstKey`. */
  sendCommand(firstKey: string, isReadonly: boolean, args: string[]): Promise<unknown>;
}

/** Your connected Redis client: ioredis or node-redis. */
export type RedisClient = IoRedisClient | NodeRedisClient;

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

/** The commands the adapters need, over either client. */
interface Commands {
  get(key: string): Promise<string | null>;
  /** SET with PX (and NX): true when the key was set. */
  setPx(key: string, value: string, ms: number, onlyIfAbsent: boolean): Promise<boolean>;
  /** SET EX. */
  setEx(key: string, value: string, seconds: number): Promise<void>;
  /** EVAL of a script over one key (cluster-safe), its answer as text. */
  script(script: string, key: string, ...args: string[]): Promise<string | null>;
  del(key: string): Promise<void>;
  /** Deletes `key` only while it still holds `value`. */
  deleteIfEquals(key: string, value: string): Promise<void>;
  /** While the client makes its first connection, a promise that settles when that is over; else undefined. */
  connecting(): Promise<void> | undefined;
}

const DELETE_IF_EQUALS = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
// Extends KEYS[1] by ARGV[2] ms while it holds ARGV[1]: 1, else 0 (a token lock, a dedup lease).
const RENEW_IF_EQUALS = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

// ioredis statuses of a client before its first 'ready' (`wait`: lazyConnect, not asked yet).
const FIRST_CONNECT = new Set(['wait', 'connecting', 'connect']);

/**
 * ioredis: a promise while the client makes its first connection (a process that serves
 * before its client is ready, a Cluster discovering its slots), settled when it is ready or has
 * given up (reconnecting, closed); undefined once it has been ready, and for a client that
 * lost its connection later (that one fails at once instead).
 */
function firstConnection(io: IoRedisCalls): () => Promise<void> | undefined {
  let wasReady = io.status === 'ready';
  let pending: Promise<void> | undefined;
  const events = ['ready', 'reconnecting', 'close', 'end'];
  return () => {
    if (wasReady || pending) return pending;
    if (io.status === 'ready') wasReady = true;
    if (wasReady || !FIRST_CONNECT.has(io.status) || typeof io.once !== 'function' || typeof io.removeListener !== 'function') return undefined;
    pending = new Promise<void>((resolve) => {
      const over = () => {
        for (const event of events) io.removeListener?.(event, over);
        wasReady = io.status === 'ready';
        pending = undefined;
        resolve();
      };
      for (const event of events) io.once?.(event, over);
    });
    if (io.status === 'wait' && typeof io.connect === 'function') io.connect().catch(() => {}); // errors arrive as events
    return pending;
  };
}

function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  return String(value);
}

function commandsFor(redis: unknown, what: string): Commands {
  const r = redis as Record<string, unknown> | null;
  const has = (name: string) => typeof r?.[name] === 'function';
  if (!r || typeof r !== 'object' || !has('get') || !has('set') || !has('del') || !has('eval')) {
    throw new ConfigError(what + ' needs your Redis client (ioredis, or node-redis after `await client.connect()`); got ' + describeValue(redis));
  }
  if (typeof r.status === 'string') {
    const io = redis as IoRedisCalls;
    // A client that lost its connection queues commands until it is back (ioredis retries
    // for over a minute): say so at once instead, so the caller falls back straight away.
    const ready = () => {
      if (io.status === 'reconnecting' || io.status === 'close') throw new Error('Redis is not connected (ioredis status "' + io.status + '")');
    };
    return {
      get: async (key) => (ready(), text(await io.get(key))),
      setPx: async (key, value, ms, onlyIfAbsent) => (
        ready(),
        (await (onlyIfAbsent ? io.set(key, value, 'PX', ms, 'NX') : io.set(key, value, 'PX', ms))) !== null
      ),
      setEx: async (key, value, seconds) => void (ready(), await io.set(key, value, 'EX', seconds)),
      script: async (script, key, ...args) => (ready(), text(await io.eval(script, 1, key, ...args))),
      del: async (key) => void (ready(), await io.del(key)),
      deleteIfEquals: async (key, value) => void (ready(), await io.eval(DELETE_IF_EQUALS, 1, key, value)),
      connecting: firstConnection(io),
    };
  }
  if (typeof r.isOpen === 'boolean') {
    const node = redis as NodeRedisCalls;
    const ready = () => {
      if (node.isOpen && node.isReady === false) throw new Error('Redis is not connected (node-redis is reconnecting)');
    };
    // createCluster() of node-redis 4 sends EVAL to a random master (it reads the key from the
    // wrong argument: redis/node-redis#2811) and fails after its redirections; the raw command
    // with the key for routing goes to the right one on every version.
    const cluster = typeof r.getMasters === 'function' && typeof r.sendCommand === 'function';
    const evalOne = (script: string, key: string, ...args: string[]) =>
      cluster ? node.sendCommand(key, false, ['EVAL', script, '1', key, ...args]) : node.eval(script, { keys: [key], arguments: args });
    return {
      get: async (key) => (ready(), text(await node.get(key))),
      setPx: async (key, value, ms, onlyIfAbsent) => (ready(), (await node.set(key, value, onlyIfAbsent ? { PX: ms, NX: true } : { PX: ms })) !== null),
      setEx: async (key, value, seconds) => void (ready(), await node.set(key, value, { EX: seconds })),
      script: async (script, key, ...args) => (ready(), text(await evalOne(script, key, ...args))),
      del: async (key) => void (ready(), await node.del(key)),
      deleteIfEquals: async (key, value) => void (ready(), await evalOne(DELETE_IF_EQUALS, key, value)),
      // node-redis takes commands only after `await client.connect()` (its README's way).
      connecting: () => undefined,
    };
  }
  throw new ConfigError(what + ' needs an ioredis client (it has `status`) or a node-redis client (it has `isOpen`); got an object with neither');
}

function checkPrefix(what: string, prefix: unknown, fallback: string): string {
  if (prefix === undefined) return fallback;
  if (typeof prefix !== 'string') throw new ConfigError(what + ': prefix must be a string such as "myapp:"; got ' + describeValue(prefix));
  return prefix;
}

const randomOwner = () => globalThis.crypto.randomUUID();

/**
 * A {@link TokenCache} on your Redis, shared by every instance of your backend: tokens are kept
 * with a TTL (`SET … PX`), and a short lock (`SET … NX PX`, renewed while its owner's token call
 * runs, released only by its owner) makes one instance call the token endpoint for a user while
 * the others wait for its token. An ioredis client may be passed before it is ready: the first
 * calls wait for its first connection (up to 2 s).
 * Attach an `error` listener to your client; while it is disconnected the exchange asks the
 * service directly.
 * @example
 * import Redis from 'ioredis'; // or: import { createClient } from 'redis'
 * const redis = new Redis(process.env.REDIS_URL);
 * const exchange = createTokenExchange({ baseUrl, accessKey, secretKey, cache: createRedisTokenCache(redis) });
 */
export function createRedisTokenCache(
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
      return raw === null ? undefined : (JSON.parse(raw) as StoredToken);
    },
    async set(key, value, ttlMs) {
      await commands.setPx(prefix + key, JSON.stringify(value), whole(ttlMs), false);
    },
    async lock(key, ttlMs): Promise<TokenCacheLock | undefined> {
      const lockKey = prefix + 'lock:' + key;
      const owner = randomOwner();
      if (!(await commands.setPx(lockKey, owner, whole(ttlMs), true))) return undefined;
      return {
        release: () => commands.deleteIfEquals(lockKey, owner),
        renew: async (ms) => (await commands.script(RENEW_IF_EQUALS, lockKey, owner, String(whole(ms)))) === '1',
      };
    },
    connecting: () => commands.connecting(),
  };
}

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
  const ttlSeconds = o.ttlSeconds ?? 86400;
  if (typeof ttlSeconds !== 'number' || !Number.isInteger(ttlSeconds) || ttlSeconds < 1) {
    throw new ConfigError(
      what +
        ': ttlSeconds must be a whole number of seconds, at least 1 (e.g. 86400); got ' +
        (typeof ttlSeconds === 'number' ? String(ttlSeconds) : describeValue(ttlSeconds)),
    );
  }
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
