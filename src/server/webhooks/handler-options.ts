// What createWebhookHandler takes, and its checks: every option checked once, with its default.
import { checkKeys, describeValue, fail, milliseconds, wholeNumber } from '../../shared/check.js';
import { messageIn } from '../../shared/message.js';
import { MAX_DELAY } from '../../shared/signal.js';
import type { TelemetryOptions } from '../../shared/otel-api.js';
import { checkServerTelemetry } from '../telemetry/guarded-telemetry.js';
import { ConfigError } from '../../errors/ConfigError.js';
import type { LogisticsUpdatedEvent, UnknownWebhookEvent } from '../../schemas/logistics.js';
import { unprefixed, type FetchRoute } from '../http/route.js';
import { checkDedupStore, type WebhookDedupStore } from './dedup.js';
import { isSecrets, secretListProblem, type Secrets } from './verify.js';
import { checkInboxOptions, type InboxHandlerOptions } from './inbox/intake.js';

/** What a callback receives besides the event. */
export interface WebhookContext {
  /** The body exactly as received. */
  rawBody: Uint8Array;
  /** SHA-256 (hex) of the raw body: the same for a repeated push. */
  dedupKey(): Promise<string>;
  /**
   * What your framework handed the handler: the Fetch `Request` (Next.js App Router, Deno, Bun,
   * workers), Hono's context, Express's or node:http's `req`, Koa's `ctx`, Fastify's `request`.
   */
  request: unknown;
}

/** Where handling stopped, for `onError`. */
export interface WebhookErrorInfo {
  /**
   * `request` malformed request (e.g. Host header), `method` not POST, `config` no secret,
   * `body` already read by another parser, unreadable, not in within `bodyTimeoutMs` (408) or
   * refused for want of room in `maxBufferedBytes` (503), `size` too large, `signature`,
   * `payload` not JSON or not the documented shape, `duplicate` already processed (200) or being
   * processed by another delivery that did not finish within 5 s (503, info), `dedup` the dedup
   * store failed or was slow (the push is processed anyway), `callback` threw or did not settle
   * within `callbackTimeoutMs` (500), `slow` the callback is still running after `slowCallbackMs`,
   * `inbox` the inbox failed to store the push or was slow (503).
   */
  stage: 'request' | 'method' | 'config' | 'body' | 'size' | 'signature' | 'payload' | 'duplicate' | 'dedup' | 'callback' | 'slow' | 'inbox';
  /** `info` needs nothing done; `warn` a rejected or slow push; `error` something to fix. */
  level: 'info' | 'warn' | 'error';
  /** The status answered (absent for `slow` and `dedup`, which do not end the request). */
  status?: number;
  /** Milliseconds the callback had taken, for `slow` and `callback`. */
  elapsedMs?: number;
}

/**
 * The webhook signing secret, a list of them while one is rotated (`[current, previous]`: a push
 * signed with any is accepted), or a function that returns either. A function is called at the
 * first request (not when the route module is imported, so a build without secrets works) and its
 * answer kept; while it returns nothing or throws, pushes get 500 and are never accepted unsigned.
 */
export type WebhookSecret = Secrets | (() => Secrets | null | undefined | Promise<Secrets | null | undefined>);

/** Options of {@link createWebhookHandler}. */
export interface WebhookHandlerOptions {
  /**
   * The webhook signing secret from the integration configuration, or a function returning it
   * (resolved at the first request: `secret: () => process.env.CHANNEL_WEBHOOK_SECRET`). While
   * you rotate it, a list: `[current, previous]` accepts pushes signed with either.
   */
  secret: WebhookSecret;
  /** Accept unsigned pushes when the secret is empty (the service then sends no signature). @default false */
  allowUnsigned?: boolean;
  /** Larger bodies get 413, checked while reading. @default 1048576 (1 MiB) */
  maxBodyBytes?: number;
  /**
   * Milliseconds a request may take to deliver its body, counted from when the handler starts
   * reading it; past it the answer is 408 and the connection is closed. The service itself waits
   * 8 s for the whole answer. Applies to bodies the handler reads (not to a body a framework
   * parser such as express.raw() buffered first). @default 8000
   */
  bodyTimeoutMs?: number;
  /**
   * Bytes of request bodies this handler holds at once, across all requests in flight (bodies
   * being read, bodies whose callback runs, and bodies whose inbox append has not settled, past
   * the answer too: with the Redis inbox, until Redis answered). When a chunk does not fit, the body that has
   * waited longest for its next chunk is dropped to make room (503 with Retry-After, connection
   * closed); when nothing can give way, the new body is. At least `maxBodyBytes`.
   * @default 67108864 (64 MiB)
   */
  maxBufferedBytes?: number;
  /**
   * OpenTelemetry: a span per push (`channel.webhook`, under your framework's request span) with
   * its stages (verify, dedup or inbox, callback), status and outcome; metrics with a meter
   * (docs/guide/telemetry.md). Never the body, the signature or the secret.
   * @example telemetry: { tracer: trace.getTracer('channel-sdk'), meter: metrics.getMeter('channel-sdk') }
   */
  telemetry?: TelemetryOptions;
  /** Called for each verified `logistics.updated` push; the handler answers 2xx only after it resolves. */
  onLogisticsUpdated: (event: LogisticsUpdatedEvent, context: WebhookContext) => unknown;
  /** Called for any other event type; without it such pushes are acknowledged and ignored. */
  onEvent?: (event: UnknownWebhookEvent, context: WebhookContext) => unknown;
  /**
   * Rejections, callback errors, slow callbacks, duplicates.
   * @default `warn` and `error` levels to console.warn / console.error, one line, never the body or the secret
   */
  onError?: (error: unknown, info: WebhookErrorInfo) => void;
  /** A callback slower than this is reported (the service stops waiting at 8 s). @default 7000 */
  slowCallbackMs?: number;
  /**
   * Milliseconds after which the handler stops waiting for a callback that has not settled:
   * reported (stage `callback`), answered 500, and its dedup lease no longer renewed, so that it
   * lapses (`dedupLeaseMs`) and a redelivery, on any instance, runs the callback again. Without
   * it, a callback that never settles held its push on every instance for as long as its
   * process lived. A callback that settles later changes nothing. @default 15000
   */
  callbackTimeoutMs?: number;
  /**
   * Remembers pushes processed (by {@link WebhookContext.dedupKey}), so that a push delivered
   * twice, or to two instances, runs the callback once: `createMemoryDedupStore()` for one
   * process, `createRedisDedupStore(redis)` for several. A repeat is acknowledged (200
   * `duplicate`) only once a delivery's callback succeeded. A repeat that finds one running
   * waits for its outcome, up to 5 s: 200 when it succeeded, the callback run by the repeat
   * when it failed, 503 with Retry-After when it has not finished, so that the service tries again.
   */
  dedup?: WebhookDedupStore;
  /** Milliseconds a dedup store call may take; past it the push is processed anyway. @default 1000 */
  dedupTimeoutMs?: number;
  /**
   * Milliseconds a delivery's hold on a push (its lease) lasts unless renewed. The handler renews
   * it every third of this while the callback runs (up to `callbackTimeoutMs`); when an instance
   * dies mid-callback, the service's redeliveries get 503 until the lease lapses, and the next
   * one is processed.
   * At least twice `dedupTimeoutMs`. @default 10000
   */
  dedupLeaseMs?: number;
}

/**
 * Options of {@link createWebhookHandler} with a durable inbox (`createRedisInbox`, or your own
 * queue): the handler stores each verified push and answers at once; the callback goes to
 * `inbox.process({ onLogisticsUpdated })` in your workers.
 */
export interface WebhookInboxHandlerOptions
  extends
    Omit<WebhookHandlerOptions, 'onLogisticsUpdated' | 'onEvent' | 'dedup' | 'dedupTimeoutMs' | 'dedupLeaseMs' | 'slowCallbackMs' | 'callbackTimeoutMs'>,
    InboxHandlerOptions {
  inbox: NonNullable<InboxHandlerOptions['inbox']>;
}

/** What {@link createWebhookHandler} returns: a Fetch route that `toNodeHandler` also serves. */
export type WebhookHandler = FetchRoute;

function defaultReport(error: unknown, info: WebhookErrorInfo): void {
  if (info.level === 'info') return;
  const text = '[channel-sdk] webhook ' + info.stage + (info.status ? ' -> ' + info.status : '') + ': ' + messageIn(unprefixed, error);
  (info.level === 'error' ? console.error : console.warn)(text);
}

const OPTION_KEYS = [
  'secret',
  'allowUnsigned',
  'maxBodyBytes',
  'bodyTimeoutMs',
  'maxBufferedBytes',
  'onLogisticsUpdated',
  'onEvent',
  'onError',
  'slowCallbackMs',
  'callbackTimeoutMs',
  'dedup',
  'dedupTimeoutMs',
  'dedupLeaseMs',
  'inbox',
  'inboxTimeoutMs',
  'telemetry',
];
// Habits from other libraries (body-parser's `limit`, Fastify's `bodyLimit`, undici's
// `bodyTimeout`), and names the shared stems would otherwise point elsewhere (checkKeys takes
// the first of equally near keys: `dedupLease` would get `dedup`).
const OPTION_HINTS = {
  limit: 'maxBodyBytes',
  bodylimit: 'maxBodyBytes',
  timeout: 'bodyTimeoutMs',
  bodytimeout: 'bodyTimeoutMs',
  webhooksecret: 'secret',
  deduplease: 'dedupLeaseMs',
  lease: 'dedupLeaseMs',
  leasems: 'dedupLeaseMs',
  deduptimeout: 'dedupTimeoutMs',
  callbacktimeout: 'callbackTimeoutMs',
  maxbufferbytes: 'maxBufferedBytes',
  maxbuffered: 'maxBufferedBytes',
  maxbufferedbyte: 'maxBufferedBytes',
};

/** A whole number within bounds, or ConfigError naming the option and an example. */
function whole(name: string, value: unknown, fallback: number, min: number, max: number, example: string): number {
  if (value === undefined) return fallback;
  return name.endsWith('Ms') ? milliseconds(name, value, min, max, Number(example)) : wholeNumber(name, value, min, max, 'bytes', Number(example));
}

/** The options checked, with their defaults: what the handler runs on. */
export function handlerSettings(options: WebhookHandlerOptions | WebhookInboxHandlerOptions) {
  if (typeof options !== 'object' || options === null) fail('createWebhookHandler needs an options object: { secret, onLogisticsUpdated }');
  const o = options as WebhookHandlerOptions;
  checkKeys(o, OPTION_KEYS, 'createWebhookHandler option', OPTION_HINTS);
  // With an inbox no callback runs here (the intake answers first), so none is required.
  const inbox = checkInboxOptions(o as unknown as Record<string, unknown>);
  const { allowUnsigned = false, onLogisticsUpdated, onEvent, dedup } = o;
  if (!inbox && typeof onLogisticsUpdated !== 'function') fail('createWebhookHandler needs onLogisticsUpdated: async (event) => { ... }');
  if (Array.isArray(o.secret) && !isSecrets(o.secret)) fail(secretListProblem(o.secret, 'createWebhookHandler'));
  if (typeof o.secret !== 'function' && !isSecrets(o.secret) && !allowUnsigned) {
    fail(
      'createWebhookHandler: secret is empty. Pass the webhook secret from the integration configuration; to read it at the first request instead of at import (e.g. for next build), pass a function: secret: () => process.env.CHANNEL_WEBHOOK_SECRET. With no secret configured at all: allowUnsigned: true',
    );
  }
  if (o.maxBodyBytes !== undefined && !(typeof o.maxBodyBytes === 'number' && o.maxBodyBytes > 0))
    fail('maxBodyBytes must be a positive number of bytes; got ' + describeValue(o.maxBodyBytes));
  const maxBodyBytes = o.maxBodyBytes ?? 1024 * 1024;
  const bodyTimeoutMs = whole('bodyTimeoutMs', o.bodyTimeoutMs, 8000, 1, MAX_DELAY, '8000');
  const maxBufferedBytes = whole('maxBufferedBytes', o.maxBufferedBytes, Math.max(64 * 1024 * 1024, maxBodyBytes), 1, Number.MAX_SAFE_INTEGER, '67108864');
  if (maxBufferedBytes < maxBodyBytes)
    fail('maxBufferedBytes (' + maxBufferedBytes + ') must be at least maxBodyBytes (' + maxBodyBytes + '): one body of the largest size must fit');
  const slowCallbackMs = whole('slowCallbackMs', o.slowCallbackMs, 7000, 1, MAX_DELAY, '7000');
  const callbackTimeoutMs = whole('callbackTimeoutMs', o.callbackTimeoutMs, 15_000, 1, MAX_DELAY, '15000');
  const dedupTimeoutMs = whole('dedupTimeoutMs', o.dedupTimeoutMs, 1000, 1, MAX_DELAY, '1000');
  const dedupLeaseMs = whole('dedupLeaseMs', o.dedupLeaseMs, Math.max(10_000, 2 * dedupTimeoutMs), 1, MAX_DELAY, '10000');
  if (dedupLeaseMs < 2 * dedupTimeoutMs) {
    fail(
      'dedupLeaseMs (' +
        dedupLeaseMs +
        ') must be at least twice dedupTimeoutMs (' +
        dedupTimeoutMs +
        '): the lease is renewed every third of it, and a renewal may take dedupTimeoutMs',
    );
  }
  if (dedup !== undefined) checkDedupStore(dedup);
  if (onEvent !== undefined && typeof onEvent !== 'function') fail('onEvent must be a function (event, context) => ...; got ' + describeValue(onEvent));
  if (o.onError !== undefined && typeof o.onError !== 'function') fail('onError must be a function (error, info) => ...; got ' + describeValue(o.onError));
  return {
    allowUnsigned,
    onLogisticsUpdated,
    onEvent,
    dedup,
    maxBodyBytes,
    bodyTimeoutMs,
    maxBufferedBytes,
    slowCallbackMs,
    callbackTimeoutMs,
    dedupTimeoutMs,
    dedupLeaseMs,
    onError: o.onError || defaultReport,
    telemetry: checkServerTelemetry(o.telemetry, 'createWebhookHandler'),
    secrets: secretSource(o.secret, allowUnsigned),
  };
}

/** The secret as given, or resolved once from a function; an Error while none is configured. */
function secretSource(secret: WebhookSecret, allowUnsigned: boolean) {
  // '' stands for "unsigned pushes accepted" (allowUnsigned with an empty secret).
  const usable = (value: unknown): Secrets | '' | undefined =>
    isSecrets(value) ? value : allowUnsigned && (value === '' || value === null || value === undefined) ? '' : undefined;
  const source = {
    value: typeof secret === 'function' ? undefined : usable(secret),
    pending: undefined as Promise<Secrets | '' | Error> | undefined,
    resolve(): Promise<Secrets | '' | Error> {
      if (source.pending) return source.pending;
      const pending = (async () => {
        try {
          const answer = await (secret as () => unknown)();
          const value = usable(answer);
          if (value !== undefined) return (source.value = value);
          if (Array.isArray(answer)) return new ConfigError(secretListProblem(answer, 'the webhook secret function') + '. Refusing the push');
          return new ConfigError(
            'the webhook secret function returned no secret; set it where the server runs (e.g. CHANNEL_WEBHOOK_SECRET). Refusing the push: it is never accepted unsigned',
          );
        } catch (error) {
          return new ConfigError('the webhook secret function threw; refusing the push', { cause: error });
        }
      })();
      source.pending = pending;
      // While none is configured, the next push asks again.
      void pending.then((value) => {
        if (value instanceof Error && source.pending === pending) source.pending = undefined;
      });
      return pending;
    },
  };
  return source;
}
