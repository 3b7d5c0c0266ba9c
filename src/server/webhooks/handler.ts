import { checkKeys, describe } from '../../shared/check.js';
import { bounded } from '../../shared/bounded.js';
import { withoutStack } from '../../shared/errors.js';
import { messageIn } from '../../shared/message.js';
import { safeReport } from '../../shared/report.js';
import { MAX_DELAY } from '../../shared/signal.js';
import { ConfigError } from '../../errors/ConfigError.js';
import type { LogisticsUpdatedEvent, UnknownWebhookEvent, WebhookEvent } from '../../schemas/logistics.js';
import { createBodyGuard } from './body-guard.js';
import { isSignatureHex, type Crypto, type Secret } from '../crypto/crypto.js';
import { checkDedupStore, type DedupLease, type DedupState, type WebhookDedupStore } from './dedup.js';
import { answer, CONSUMED_ADVICE, fetchRoute, unprefixed, type BodyResult, type Core, type FetchRoute, type Incoming, type Outgoing } from '../http/route.js';
import { isLogisticsUpdated, parsePayload } from './parse.js';
import { isSecret, SIGNATURE_HEADER, signatureMismatch, signatureMissing, verifySignature } from './verify.js';

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
   * processed by another delivery (503, info), `dedup` the dedup store failed or was slow (the
   * push is processed anyway), `callback` threw, `slow` the callback is still running after
   * `slowCallbackMs`.
   */
  stage: 'request' | 'method' | 'config' | 'body' | 'size' | 'signature' | 'payload' | 'duplicate' | 'dedup' | 'callback' | 'slow';
  /** `info` needs nothing done; `warn` a rejected or slow push; `error` something to fix. */
  level: 'info' | 'warn' | 'error';
  /** The status answered (absent for `slow` and `dedup`, which do not end the request). */
  status?: number;
  /** Milliseconds the callback had taken, for `slow` and `callback`. */
  elapsedMs?: number;
}

/**
 * The webhook signing secret, or a function that returns it. A function is called at the first
 * request (not when the route module is imported, so a build without secrets works) and its
 * answer kept; while it returns nothing or throws, pushes get 500 and are never accepted unsigned.
 */
export type WebhookSecret = Secret | (() => Secret | null | undefined | Promise<Secret | null | undefined>);

/** Options of {@link createWebhookHandler}. */
export interface WebhookHandlerOptions {
  /**
   * The webhook signing secret from the integration configuration, or a function returning it
   * (resolved at the first request: `secret: () => process.env.CHANNEL_WEBHOOK_SECRET`).
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
   * being read, and bodies whose callback runs). When a chunk does not fit, the body that has
   * waited longest for its next chunk is dropped to make room (503 with Retry-After, connection
   * closed); when nothing can give way, the new body is. At least `maxBodyBytes`.
   * @default 67108864 (64 MiB)
   */
  maxBufferedBytes?: number;
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
   * Remembers pushes processed (by {@link WebhookContext.dedupKey}), so that a push delivered
   * twice, or to two instances, runs the callback once: `createMemoryDedupStore()` for one
   * process, `createRedisDedupStore(redis)` for several. A repeat is acknowledged (200
   * `duplicate`) only once a delivery's callback succeeded; while one runs, repeats get 503 with
   * Retry-After so that the service tries again.
   */
  dedup?: WebhookDedupStore;
  /** Milliseconds a dedup store call may take; past it the push is processed anyway. @default 1000 */
  dedupTimeoutMs?: number;
  /**
   * Milliseconds a delivery's hold on a push (its lease) lasts unless renewed. The handler renews
   * it every third of this while the callback runs; when an instance dies mid-callback, the
   * service's redeliveries get 503 until the lease lapses, and the next one is processed.
   * At least twice `dedupTimeoutMs`. @default 10000
   */
  dedupLeaseMs?: number;
}

/** What {@link createWebhookHandler} returns: a Fetch route that `toNodeHandler` also serves. */
export type WebhookHandler = FetchRoute;

const OK = answer(200, { ok: true });
const DUPLICATE = answer(200, { ok: true, duplicate: true });
// Closing the connection: a client that stalls its body is not kept for another request.
const BODY_TIMEOUT = answer(408, { error: 'the body did not arrive in time' }, { connection: 'close' });
const NOT_POST = answer(405, { error: 'method not allowed' }, { allow: 'POST' });
const BAD_REQUEST = answer(400, { error: 'bad request' });
const UNAUTHORIZED = answer(401, { error: 'invalid signature' });
const INVALID = answer(400, { error: 'invalid payload' });
const TOO_LARGE = answer(413, { error: 'payload too large' });
const UNREADABLE = answer(400, { error: 'could not read the body' });
const NO_SECRET = answer(500, { error: 'webhook secret not configured' });
const FAILED = answer(500, { error: 'handler failed' });

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
  'dedup',
  'dedupTimeoutMs',
  'dedupLeaseMs',
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
  maxbufferbytes: 'maxBufferedBytes',
  maxbuffered: 'maxBufferedBytes',
  maxbufferedbyte: 'maxBufferedBytes',
};

/** A whole number within bounds, or ConfigError naming the option and an example. */
function whole(name: string, value: unknown, fallback: number, min: number, max: number, example: string): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  throw new ConfigError(name + ' must be a whole number from ' + min + ' to ' + max + ' (e.g. ' + example + '); got ' + describe(value));
}

const newLeaseId = () => globalThis.crypto.randomUUID();

/** The webhook route over one crypto (what `createWebhookHandler` runs). */
export function createHandler(crypto: Crypto, options: WebhookHandlerOptions): WebhookHandler {
  if (typeof options !== 'object' || options === null) throw new ConfigError('createWebhookHandler needs an options object: { secret, onLogisticsUpdated }');
  const o = options;
  checkKeys(o, OPTION_KEYS, 'createWebhookHandler option', OPTION_HINTS);
  const { allowUnsigned = false, onLogisticsUpdated, onEvent, dedup } = o;
  if (typeof onLogisticsUpdated !== 'function') throw new ConfigError('createWebhookHandler needs onLogisticsUpdated: async (event) => { ... }');
  if (typeof o.secret !== 'function' && !isSecret(o.secret) && !allowUnsigned) {
    throw new ConfigError(
      'createWebhookHandler: secret is empty. Pass the webhook secret from the integration configuration; to read it at the first request instead of at import (e.g. for next build), pass a function: secret: () => process.env.CHANNEL_WEBHOOK_SECRET. With no secret configured at all: allowUnsigned: true',
    );
  }
  if (o.maxBodyBytes !== undefined && !(typeof o.maxBodyBytes === 'number' && o.maxBodyBytes > 0)) throw new ConfigError('maxBodyBytes must be a positive number of bytes; got ' + describe(o.maxBodyBytes));
  const maxBodyBytes = o.maxBodyBytes ?? 1024 * 1024;
  const bodyTimeoutMs = whole('bodyTimeoutMs', o.bodyTimeoutMs, 8000, 1, MAX_DELAY, '8000');
  const maxBufferedBytes = whole('maxBufferedBytes', o.maxBufferedBytes, Math.max(64 * 1024 * 1024, maxBodyBytes), 1, Number.MAX_SAFE_INTEGER, '67108864');
  if (maxBufferedBytes < maxBodyBytes) throw new ConfigError('maxBufferedBytes (' + maxBufferedBytes + ') must be at least maxBodyBytes (' + maxBodyBytes + '): one body of the largest size must fit');
  const slowCallbackMs = whole('slowCallbackMs', o.slowCallbackMs, 7000, 1, MAX_DELAY, '7000');
  const dedupTimeoutMs = whole('dedupTimeoutMs', o.dedupTimeoutMs, 1000, 1, MAX_DELAY, '1000');
  const dedupLeaseMs = whole('dedupLeaseMs', o.dedupLeaseMs, Math.max(10_000, 2 * dedupTimeoutMs), 1, MAX_DELAY, '10000');
  if (dedupLeaseMs < 2 * dedupTimeoutMs) {
    throw new ConfigError('dedupLeaseMs (' + dedupLeaseMs + ') must be at least twice dedupTimeoutMs (' + dedupTimeoutMs + '): the lease is renewed every third of it, and a renewal may take dedupTimeoutMs');
  }
  if (dedup !== undefined) checkDedupStore(dedup);
  if (onEvent !== undefined && typeof onEvent !== 'function') throw new ConfigError('onEvent must be a function (event, context) => ...; got ' + describe(onEvent));
  if (o.onError !== undefined && typeof o.onError !== 'function') throw new ConfigError('onError must be a function (error, info) => ...; got ' + describe(o.onError));
  const bodies = createBodyGuard(bodyTimeoutMs, maxBufferedBytes);
  const busy = answer(503, { error: 'too many request bodies in flight; retry later' }, { 'retry-after': String(Math.ceil(bodyTimeoutMs / 1000)), connection: 'close' });
  const inProgress = answer(503, { error: 'this push is being processed by another delivery; retry later' }, { 'retry-after': String(Math.ceil(dedupLeaseMs / 1000)) });
  const report = safeReport(o.onError || defaultReport);
  const storeCall = <T>(call: () => T | Promise<T>, what: string) =>
    bounded(call, dedupTimeoutMs, () => new Error('the dedup store did not answer ' + what + ' within ' + dedupTimeoutMs + ' ms'));
  const secrets = secretSource(o.secret, allowUnsigned);
  // Pushes in progress in this process, by dedup key: a repeat waits for the first one's answer.
  const inflight = new Map<string, Promise<Outgoing>>();

  function reject(out: Outgoing, error: unknown, stage: WebhookErrorInfo['stage'], level: WebhookErrorInfo['level'] = 'warn'): Outgoing {
    report(error, { stage, level, status: out.status });
    return out;
  }

  const core: Core = async (incoming) => {
    if (incoming.malformedHost) return reject(BAD_REQUEST, new Error('malformed Host header'), 'request', 'info');
    if (incoming.method !== 'POST') return reject(NOT_POST, new Error('method ' + incoming.method + ' is not allowed; the service POSTs'), 'method');
    let secret = secrets.value;
    if (secret === undefined) {
      const resolved = await secrets.resolve();
      if (resolved instanceof Error) return reject(NO_SECRET, resolved, 'config', 'error');
      secret = resolved;
    }
    // Checked before the body is read: a push without a well-formed signature costs nothing more.
    const signature = secret === '' ? undefined : incoming.header(SIGNATURE_HEADER);
    if (secret !== '' && !isSignatureHex(signature)) return reject(UNAUTHORIZED, withoutStack(() => signatureMissing(signature)), 'signature');
    const ticket = bodies.open();
    try {
      return await verified(incoming, secret, signature, await incoming.body(maxBodyBytes, ticket));
    } finally {
      ticket.close();
    }
  };

  async function verified(incoming: Incoming, secret: Secret | '', signature: string | undefined, body: BodyResult): Promise<Outgoing> {
    if (!body.ok) {
      if (body.reason === 'too-large') return reject(TOO_LARGE, new Error('body larger than maxBodyBytes (' + maxBodyBytes + ')'), 'size');
      if (body.reason === 'unreadable') return reject(UNREADABLE, body.error, 'body');
      if (body.reason === 'timeout') return reject(BODY_TIMEOUT, new Error('the body did not arrive within bodyTimeoutMs (' + bodyTimeoutMs + ' ms); answered 408 and closed the connection'), 'body');
      if (body.reason === 'busy') {
        return reject(busy, new Error('request bodies in flight hold maxBufferedBytes (' + maxBufferedBytes + ' bytes); refused a stalled or new body with 503 and closed its connection'), 'body');
      }
      const message =
        'the push body was read by something else before the webhook handler, which needs the raw bytes to check the signature. ' + CONSUMED_ADVICE[incoming.framework];
      return reject(answer(500, { error: message }), new ConfigError(message), 'body', 'error');
    }
    const rawBody = body.bytes;
    if (secret !== '' && !(await verifySignature(crypto, rawBody, signature, secret))) return reject(UNAUTHORIZED, withoutStack(signatureMismatch), 'signature');
    let event: WebhookEvent;
    try {
      event = parsePayload(rawBody, crypto.utf8);
    } catch (error) {
      return reject(INVALID, error, 'payload');
    }
    let key: Promise<string> | undefined;
    const context: WebhookContext = { rawBody, dedupKey: () => (key ||= crypto.sha256Hex(rawBody)), request: incoming.native };
    if (!dedup) return deliver(event, context);
    return deliverOnce(dedup, event, context);
  }

  // A repeat is acknowledged only once a delivery's callback succeeded (`done`); while one runs
  // elsewhere (`running`, a live lease) the answer is 503, so the service delivers it again, and
  // a delivery that dies or fails leaves nothing behind that outlives its lease.
  async function deliverOnce(store: WebhookDedupStore, event: WebhookEvent, context: WebhookContext): Promise<Outgoing> {
    const key = await context.dedupKey();
    const running = inflight.get(key);
    if (running) {
      const out = await running;
      report(new Error('a repeat of a push in progress here; answered with its outcome'), { stage: 'duplicate', level: 'info', status: out.status });
      return out;
    }
    let out: Outgoing = FAILED;
    let settle!: (out: Outgoing) => void;
    inflight.set(key, new Promise((resolve) => (settle = resolve)));
    try {
      const lease: DedupLease = { id: newLeaseId(), ms: dedupLeaseMs };
      let state: DedupState | undefined;
      try {
        state = await storeCall(() => store.claim(key, lease), 'claim');
        if (state !== 'claimed' && state !== 'running' && state !== 'done') {
          throw new Error("the dedup store's claim answered " + describe(state) + "; expected 'claimed', 'running' or 'done'");
        }
      } catch (error) {
        state = undefined;
        report(error, { stage: 'dedup', level: 'warn' }); // processed anyway: a repeat beats a loss
      }
      if (state === 'done') {
        report(new Error('push already processed (same body); acknowledged without calling the callback'), { stage: 'duplicate', level: 'info', status: 200 });
        return (out = DUPLICATE);
      }
      if (state === 'running') {
        report(new Error('another delivery of this push is being processed; answered 503 so that the service delivers it again'), { stage: 'duplicate', level: 'info', status: 503 });
        return (out = inProgress);
      }
      out = await deliver(event, context, state === 'claimed' ? { store, key, lease } : undefined);
      // Marked processed only now; a failure gives the lease back, so the next delivery runs at
      // once. Without a claim (the store failed) neither is waited for: the answer stays bounded.
      const settled = storeCall(() => (out === OK ? store.complete(key, lease) : store.release(key, lease)), out === OK ? 'complete' : 'release').catch(
        (error: unknown) => report(error, { stage: 'dedup', level: 'warn' }),
      );
      if (state === 'claimed') await settled;
      return out;
    } finally {
      inflight.delete(key);
      settle(out);
    }
  }

  // Callbacks in progress, watched by one timer rather than a timer per push: it reports slow
  // ones and renews the dedup lease of each every third of dedupLeaseMs.
  interface Held {
    store: WebhookDedupStore;
    key: string;
    lease: DedupLease;
    renewed?: number;
    renewing?: boolean;
    lost?: boolean;
  }
  const running = new Set<{ started: number; reported: boolean; held?: Held }>();
  let watcher: ReturnType<typeof setInterval> | undefined;
  const renewEvery = dedupLeaseMs / 3;
  const renew = (held: Held, now: number) => {
    held.renewing = true;
    held.renewed = now;
    storeCall(() => held.store.renew(held.key, held.lease), 'renew').then(
      (mine) => {
        held.renewing = false;
        if (mine === false && !held.lost) {
          held.lost = true;
          report(new Error('the lease on this push lapsed while its callback ran (the event loop or the store stalled past dedupLeaseMs); another delivery may run it too'), { stage: 'dedup', level: 'warn' });
        }
      },
      (error: unknown) => {
        held.renewing = false;
        report(error, { stage: 'dedup', level: 'warn' });
      },
    );
  };
  const watch = () => {
    const now = Date.now();
    for (const call of running) {
      const held = call.held;
      if (held && !held.renewing && !held.lost && now - (held.renewed ?? call.started) >= renewEvery) renew(held, now);
      if (call.reported || now - call.started < slowCallbackMs) continue;
      call.reported = true;
      report(
        new Error('the callback has run ' + slowCallbackMs + ' ms; the service stops waiting at 8 s and records a failure. Acknowledge first and process in the background (enqueue, then return)'),
        { stage: 'slow', level: 'warn', elapsedMs: now - call.started },
      );
    }
  };
  const watchEvery = Math.min(500, Math.max(5, slowCallbackMs / 8), Math.max(5, renewEvery / 2));

  async function deliver(event: WebhookEvent, context: WebhookContext, held?: Held): Promise<Outgoing> {
    const call = { started: Date.now(), reported: false, held };
    running.add(call);
    if (!watcher) {
      watcher = setInterval(watch, watchEvery);
      (watcher as { unref?: () => void }).unref?.();
    }
    try {
      if (isLogisticsUpdated(event)) await onLogisticsUpdated(event, context);
      else if (onEvent) await onEvent(event as UnknownWebhookEvent, context);
    } catch (error) {
      report(error, { stage: 'callback', level: 'error', status: 500, elapsedMs: Date.now() - call.started });
      return FAILED;
    } finally {
      running.delete(call);
      if (running.size === 0) {
        clearInterval(watcher);
        watcher = undefined;
      }
    }
    return OK;
  }

  return fetchRoute(core);
}

/** The secret as given, or resolved once from a function; an Error while none is configured. */
function secretSource(secret: WebhookSecret, allowUnsigned: boolean) {
  // '' stands for "unsigned pushes accepted" (allowUnsigned with an empty secret).
  const usable = (value: unknown): Secret | '' | undefined => (isSecret(value) ? value : allowUnsigned && (value === '' || value === null || value === undefined) ? '' : undefined);
  const source = {
    value: typeof secret === 'function' ? undefined : usable(secret),
    pending: undefined as Promise<Secret | '' | Error> | undefined,
    resolve(): Promise<Secret | '' | Error> {
      if (source.pending) return source.pending;
      const pending = (async () => {
        try {
          const value = usable(await (secret as () => unknown)());
          if (value !== undefined) return (source.value = value);
          return new ConfigError('the webhook secret function returned no secret; set it where the server runs (e.g. CHANNEL_WEBHOOK_SECRET). Refusing the push: it is never accepted unsigned');
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
