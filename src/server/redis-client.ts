// The user's own Redis client, ioredis (v5, v6) or node-redis (`redis` v4 to v6), seen through the
// few commands the adapters (redis.ts) and the webhook inbox (webhooks/inbox/) need. No client is
// bundled: each command is called in the style of the client at hand.
import { describeValue, fail } from '../shared/check.js';

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
  /** `keyPrefix`: put before every key given to a command, a script's KEYS included. */
  options?: { keyPrefix?: unknown };
  /** With `lazyConnect`, a client in status `wait` connects when asked (or at its first command). */
  connect?(): Promise<unknown>;
  once?(event: string, listener: () => void): unknown;
  removeListener?(event: string, listener: () => void): unknown;
  get(key: string): Promise<unknown>;
  set(key: string, value: string, ...options: Array<string | number>): Promise<unknown>;
  del(key: string): Promise<unknown>;
  eval(script: string, numberOfKeys: number, ...keysAndArguments: Array<string | Uint8Array>): Promise<unknown>;
}

/** How the adapters call a node-redis client. */
interface NodeRedisCalls {
  isOpen: boolean;
  isReady?: boolean;
  get(key: string): Promise<unknown>;
  set(key: string, value: string, options: { PX?: number; EX?: number; NX?: true }): Promise<unknown>;
  del(key: string): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: Array<string | Uint8Array> }): Promise<unknown>;
  /** A cluster's (createCluster) raw command, routed by `firstKey`. */
  sendCommand(firstKey: string, isReadonly: boolean, args: Array<string | Uint8Array>): Promise<unknown>;
}

/** Your connected Redis client: ioredis or node-redis. */
export type RedisClient = IoRedisClient | NodeRedisClient;

/** The commands the adapters need, over either client. */
export interface Commands {
  get(key: string): Promise<string | null>;
  /** SET with PX (and NX): true when the key was set. */
  setPx(key: string, value: string, ms: number, onlyIfAbsent: boolean): Promise<boolean>;
  /** SET EX. */
  setEx(key: string, value: string, seconds: number): Promise<void>;
  /** EVAL of a script over one key (cluster-safe), its answer as text. */
  script(script: string, key: string, ...args: string[]): Promise<string | null>;
  /**
   * EVAL over several keys of one hash slot (the first routes it on a cluster); the reply as the
   * client gives it. An argument may be bytes (a Buffer where the runtime has one), sent as they are.
   */
  scriptKeys(script: string, keys: string[], args: Array<string | Uint8Array>): Promise<unknown>;
  del(key: string): Promise<void>;
  /** Deletes `key` only while it still holds `value`. */
  deleteIfEquals(key: string, value: string): Promise<void>;
  /** While the client makes its first connection, a promise that settles when that is over; else undefined. */
  connecting(): Promise<void> | undefined;
  /**
   * What the client puts before every key it is given (ioredis `keyPrefix`), '' for none. It puts
   * it before a script's KEYS, not before the keys a script builds: those must carry it themselves.
   */
  keyPrefix: string;
}

const DELETE_IF_EQUALS = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

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

/**
 * ioredis's `keyPrefix` (a Redis or a Cluster: `options.keyPrefix`), as text. A Buffer that is not
 * UTF-8 is refused: ioredis sends such a key with text arguments corrupted (Redis answers "ERR
 * Protocol error" and drops the connection), so pushes would be acknowledged and never run.
 */
function keyPrefixOf(io: { options?: { keyPrefix?: unknown } }, what: string): string {
  const prefix = io.options?.keyPrefix;
  if (typeof prefix === 'string') return prefix;
  if (!(prefix instanceof Uint8Array)) return '';
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(prefix);
  } catch {
    return fail(
      what +
        ": your ioredis client's keyPrefix is a Buffer that is not UTF-8 text (bytes " +
        Array.from(prefix.subarray(0, 32), (byte) => byte.toString(16).padStart(2, '0')).join(' ') +
        (prefix.length > 32 ? ' …' : '') +
        '): ioredis sends its keys corrupted next to text arguments (Redis answers "ERR Protocol error"). Give keyPrefix as a string such as "myapp:"',
    );
  }
}

export function commandsFor(redis: unknown, what: string): Commands {
  const r = redis as Record<string, unknown> | null;
  const has = (name: string) => typeof r?.[name] === 'function';
  if (!r || typeof r !== 'object' || !has('get') || !has('set') || !has('del') || !has('eval')) {
    fail(what + ' needs your Redis client (ioredis, or node-redis after `await client.connect()`); got ' + describeValue(redis));
  }
  if (typeof r.status === 'string') {
    const io = redis as IoRedisCalls;
    // A client that lost its connection queues commands until it is back (ioredis retries
    // for over a minute): say so at once instead, so the caller falls back straight away.
    const ready = () => {
      if (io.status === 'reconnecting' || io.status === 'close') throw new Error('Redis is not connected (ioredis status "' + io.status + '")');
    };
    // A script (the dedup store's, the inbox's) waits for the client's first connection: with
    // enableOfflineQueue: false ioredis refuses every command until then (lazyConnect, or a process
    // that serves at once), so the first pushes were answered 503 or run without their dedup.
    const connecting = firstConnection(io);
    const connected = <T>(send: () => Promise<T>): Promise<T> => {
      const waiting = connecting();
      return waiting ? waiting.then(() => (ready(), send())) : (ready(), send());
    };
    return {
      get: async (key) => (ready(), text(await io.get(key))),
      setPx: async (key, value, ms, onlyIfAbsent) => (
        ready(),
        (await (onlyIfAbsent ? io.set(key, value, 'PX', ms, 'NX') : io.set(key, value, 'PX', ms))) !== null
      ),
      setEx: async (key, value, seconds) => void (ready(), await io.set(key, value, 'EX', seconds)),
      script: async (script, key, ...args) => text(await connected(() => io.eval(script, 1, key, ...args))),
      scriptKeys: async (script, keys, args) => connected(() => io.eval(script, keys.length, ...keys, ...args)),
      del: async (key) => void (ready(), await io.del(key)),
      deleteIfEquals: async (key, value) => void (ready(), await io.eval(DELETE_IF_EQUALS, 1, key, value)),
      connecting,
      keyPrefix: keyPrefixOf(io, what),
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
    const evalKeys = (script: string, keys: string[], args: Array<string | Uint8Array>) =>
      cluster ? node.sendCommand(keys[0], false, ['EVAL', script, String(keys.length), ...keys, ...args]) : node.eval(script, { keys, arguments: args });
    const evalOne = (script: string, key: string, ...args: string[]) => evalKeys(script, [key], args);
    return {
      get: async (key) => (ready(), text(await node.get(key))),
      setPx: async (key, value, ms, onlyIfAbsent) => (ready(), (await node.set(key, value, onlyIfAbsent ? { PX: ms, NX: true } : { PX: ms })) !== null),
      setEx: async (key, value, seconds) => void (ready(), await node.set(key, value, { EX: seconds })),
      script: async (script, key, ...args) => (ready(), text(await evalOne(script, key, ...args))),
      scriptKeys: async (script, keys, args) => (ready(), evalKeys(script, keys, args)),
      del: async (key) => void (ready(), await node.del(key)),
      deleteIfEquals: async (key, value) => void (ready(), await evalOne(DELETE_IF_EQUALS, key, value)),
      // node-redis takes commands only after `await client.connect()` (its README's way).
      connecting: () => undefined,
      keyPrefix: '',
    };
  }
  fail(what + ' needs an ioredis client (it has `status`) or a node-redis client (it has `isOpen`); got an object with neither');
}

export function checkPrefix(what: string, prefix: unknown, fallback: string): string {
  if (prefix === undefined) return fallback;
  if (typeof prefix !== 'string') fail(what + ': prefix must be a string such as "myapp:"; got ' + describeValue(prefix));
  return prefix;
}
