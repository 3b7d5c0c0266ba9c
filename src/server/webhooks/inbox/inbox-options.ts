// What createRedisInbox and inbox.process take, and their checks: every option checked once, with its default.
import { checkKeys, describeValue, fail, milliseconds, TTL_SECONDS, wholeNumber } from '../../../shared/check.js';
import { MAX_DELAY } from '../../../shared/signal.js';
import type { TelemetryOptions } from '../../../shared/otel-api.js';
import { checkServerTelemetry } from '../../telemetry/guarded-telemetry.js';
import { checkPrefix } from '../../redis-client.js';
import type { InboxProcessOptions } from './inbox-types.js';

/** Options of {@link createRedisInbox}. */
export interface RedisInboxOptions {
  /**
   * Put before the inbox's keys, which share one hash tag so that a Redis Cluster keeps them on one
   * master: `{<prefix>inbox}:stream`, `…:dead`, `…:retry`, `…:push:<dedupKey>`. A prefix that holds
   * a `{` is taken as your own hash tag (`'{myapp}:'`), and must hold a whole one: `'{}'`, `'a{'` or
   * `'x}{y:'` are refused (a Cluster would refuse every push). @default 'channel-sdk:'
   */
  prefix?: string;
  /** Attempts before a push is put aside as a dead letter (a worker that died mid-callback counts as one). @default 10 */
  maxAttempts?: number;
  /**
   * How long a worker's hold on a push lasts unless renewed, in ms. Workers renew it every third of
   * this while the callback runs; when a worker dies, its pushes go to another once it lapses. @default 30000
   */
  leaseMs?: number;
  /**
   * A callback still running after this many ms counts as failed: its `signal` is aborted, the push
   * is retried (with backoff, up to `maxAttempts`), and the worker's slot is freed. @default 60000
   */
  callbackTimeoutMs?: number;
  /**
   * Milliseconds to wait before attempt `attempt + 1` after attempt `attempt` failed.
   * @default exponential from 1 s, doubling, at most 10 minutes, ±20% jitter
   */
  retryDelayMs?: (attempt: number) => number;
  /** How long a processed push is remembered (repeats acknowledged without a run), in seconds; also the newest snapshot per order. @default 86400 */
  ttlSeconds?: number;
  /** How often an idle worker looks for pushes, in ms. @default 200 */
  pollMs?: number;
  /** Milliseconds each Redis call may take (an append, a worker's read or write) before it counts as failed. @default 2000 */
  timeoutMs?: number;
  /**
   * OpenTelemetry for the workers (`inbox.process`): a CONSUMER span per callback run
   * (`channel.inbox.process`: attempt, outcome, event type) with the callback's spans inside, and
   * metrics with a meter (docs/guide/telemetry.md). The handler's side takes its own `telemetry`.
   * @example telemetry: { tracer: trace.getTracer('channel-sdk'), meter: metrics.getMeter('channel-sdk') }
   */
  telemetry?: TelemetryOptions;
}

const OPTION_KEYS = ['prefix', 'maxAttempts', 'leaseMs', 'callbackTimeoutMs', 'retryDelayMs', 'ttlSeconds', 'pollMs', 'timeoutMs', 'telemetry'];
// Habits from BullMQ (attempts, backoff, lockDuration) and the dedup store's names.
const OPTION_HINTS = {
  attempts: 'maxAttempts',
  retries: 'maxAttempts',
  maxretries: 'maxAttempts',
  lockduration: 'leaseMs',
  lease: 'leaseMs',
  dedupleasems: 'leaseMs',
  backoff: 'retryDelayMs',
  retrydelay: 'retryDelayMs',
  timeout: 'timeoutMs',
  callbacktimeout: 'callbackTimeoutMs',
  jobtimeout: 'callbackTimeoutMs',
  ttl: 'ttlSeconds',
  keyprefix: 'prefix',
};

/** A whole number within bounds, or ConfigError naming the option and an example. */
function whole(what: string, name: string, value: unknown, fallback: number, min: number, max: number, example: string): number {
  if (value === undefined) return fallback;
  if (name.endsWith('Ms')) return milliseconds(what + ': ' + name, value, min, max, Number(example));
  return wholeNumber(what + ': ' + name, value, min, max, name === 'maxAttempts' ? 'attempts' : 'callbacks', Number(example));
}

/** 1 s, 2 s, 4 s... at most 10 minutes, each ±20%. */
export function defaultRetryDelay(attempt: number): number {
  const base = Math.min(600_000, 1000 * 2 ** Math.min(20, Math.max(0, attempt - 1)));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/**
 * The hash tag a Redis Cluster reads in `key`: the text between its first `{` and the first `}`
 * after it, or undefined when there is none or it is empty (then the whole key is hashed).
 */
export function hashTagOf(key: string): string | undefined {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/**
 * What every inbox key starts with: a hash tag of our own, unless the prefix brings one. Every
 * key is `<tag>:<name>`, so the tag must hold a whole, non-empty hash tag by itself; else each
 * key is hashed whole (or by a `}` in an order number) and a Cluster refuses the scripts
 * (CROSSSLOT) that a single node runs.
 */
function tagOf(prefix: string): string {
  const tag = prefix.includes('{') ? prefix + 'inbox' : '{' + prefix + 'inbox}';
  if (hashTagOf(tag) !== undefined) return tag;
  const open = tag.indexOf('{');
  return fail(
    'createRedisInbox(redis, options): prefix ' +
      JSON.stringify(prefix) +
      ' gives keys such as ' +
      JSON.stringify(tag + ':stream') +
      ' that hold ' +
      (tag[open + 1] === '}' ? 'an empty hash tag "{}"' : 'a "{" with no "}" after it') +
      ": on a Redis Cluster the inbox's keys would then fall in different hash slots and every push would be answered 503 (CROSSSLOT). " +
      'Use a prefix without braces ("myapp:") or one with a hash tag that holds text ("{myapp}:")',
  );
}

/**
 * The options checked, with their defaults, and the inbox's keys. `keyPrefix`: what the client
 * puts before every key it is given (ioredis `keyPrefix`): `keys` go to scripts as their KEYS and
 * get it from the client; `tag` goes as an argument, for the keys a script builds, so it carries it
 * itself. Without that, pause and the marks, order locks and newest snapshots a script builds
 * would miss the keys the client prefixed, and two apps told apart by keyPrefix would share them.
 */
export function inboxSettings(options: RedisInboxOptions | undefined, keyPrefix = '') {
  const what = 'createRedisInbox(redis, options)';
  if (options !== undefined && (typeof options !== 'object' || options === null)) fail(what + ': options must be an object; got ' + describeValue(options));
  const o = options || {};
  checkKeys(o, OPTION_KEYS, what + ' option', OPTION_HINTS);
  const prefix = checkPrefix(what, o.prefix, 'channel-sdk:');
  const leaseMs = whole(what, 'leaseMs', o.leaseMs, 30_000, 100, MAX_DELAY, '30000');
  const timeoutMs = whole(what, 'timeoutMs', o.timeoutMs, 2000, 1, MAX_DELAY, '2000');
  if (leaseMs < 3 * timeoutMs)
    fail(
      what +
        ': leaseMs (' +
        leaseMs +
        ') must be at least 3 x timeoutMs (' +
        timeoutMs +
        '): the lease is renewed every third of it, and a renewal may take timeoutMs',
    );
  if (o.retryDelayMs !== undefined && typeof o.retryDelayMs !== 'function')
    fail(what + ': retryDelayMs must be a function (attempt) => milliseconds; got ' + describeValue(o.retryDelayMs));
  const own = tagOf(prefix);
  const tag = keyPrefix + own;
  if (hashTagOf(tag) === undefined)
    fail(
      what +
        ": your ioredis client's keyPrefix " +
        JSON.stringify(keyPrefix) +
        ' gives keys such as ' +
        JSON.stringify(tag + ':stream') +
        ' whose hash tag is empty: on a Redis Cluster the inbox\'s keys would fall in different hash slots (CROSSSLOT). Use a keyPrefix without braces ("myapp:") or with a hash tag that holds text ("{myapp}:")',
    );
  return {
    tag,
    keys: {
      stream: own + ':stream',
      dead: own + ':dead',
      retry: own + ':retry',
      parked: own + ':parked',
      age: own + ':age',
      workers: own + ':workers',
      paused: own + ':paused',
      push: (key: string) => own + ':push:' + key,
    },
    maxAttempts: whole(what, 'maxAttempts', o.maxAttempts, 10, 1, 1000, '10'),
    leaseMs,
    callbackTimeoutMs: whole(what, 'callbackTimeoutMs', o.callbackTimeoutMs, 60_000, 1, MAX_DELAY, '60000'),
    retryDelayMs: o.retryDelayMs || defaultRetryDelay,
    ttlSeconds: wholeNumber(what + ': ttlSeconds', o.ttlSeconds ?? TTL_SECONDS.example, TTL_SECONDS.min, TTL_SECONDS.max, 'seconds', TTL_SECONDS.example),
    pollMs: whole(what, 'pollMs', o.pollMs, 200, 1, 60_000, '200'),
    timeoutMs,
    telemetry: checkServerTelemetry(o.telemetry, 'createRedisInbox'),
  };
}

export type InboxSettings = ReturnType<typeof inboxSettings>;

/** inbox.process's options checked, with their defaults. */
export function processSettings(options: InboxProcessOptions) {
  const what = 'inbox.process(options)';
  if (typeof options !== 'object' || options === null) fail(what + ' needs an options object: { onLogisticsUpdated, concurrency }');
  checkKeys(options, ['onLogisticsUpdated', 'onEvent', 'concurrency', 'onError'], what + ' option', {
    parallelism: 'concurrency',
    handler: 'onLogisticsUpdated',
  });
  const { onLogisticsUpdated, onEvent, onError } = options;
  if (typeof onLogisticsUpdated !== 'function') fail(what + ' needs onLogisticsUpdated: async (event, context) => { ... }');
  if (onEvent !== undefined && typeof onEvent !== 'function')
    fail(what + ': onEvent must be a function (event, context) => ...; got ' + describeValue(onEvent));
  if (onError !== undefined && typeof onError !== 'function') fail(what + ': onError must be a function (error, info) => ...; got ' + describeValue(onError));
  return { onLogisticsUpdated, onEvent, onError, concurrency: whole(what, 'concurrency', options.concurrency, 1, 1, 10_000, '4') };
}
