import { ConfigError } from '../errors/ConfigError.js';
import type { LogisticsUpdatedEvent, UnknownWebhookEvent, WebhookEvent } from '../schemas/logistics.js';
import { isSignatureHex, type Crypto, type Secret } from './crypto.js';
import type { WebhookDedupStore } from './dedup.js';
import { answer, CONSUMED_ADVICE, fetchRoute, messageOf, type Core, type FetchRoute, type Outgoing } from './route.js';
import { isLogisticsUpdated, isSecret, parsePayload, SIGNATURE_HEADER, signatureMismatch, signatureMissing } from './webhook.js';

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
   * `body` already read by another parser or unreadable, `size` too large, `signature`,
   * `payload` not JSON or not the documented shape, `duplicate` already handled (info),
   * `dedup` the dedup store failed or was slow (the push is processed anyway), `callback` threw,
   * `slow` the callback is still running after `slowCallbackMs`.
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
   * Remembers pushes already handled (by {@link WebhookContext.dedupKey}), so that a push
   * delivered twice, or to two instances, runs the callback once: `createMemoryDedupStore()`
   * for one process, `createRedisDedupStore(redis)` for several.
   */
  dedup?: WebhookDedupStore;
  /** Milliseconds a dedup store call may take; past it the push is processed anyway. @default 1000 */
  dedupTimeoutMs?: number;
}

/** What {@link createWebhookHandler} returns: a Fetch route that `toNodeHandler` also serves. */
export type WebhookHandler = FetchRoute;

const OK = answer(200, { ok: true });
const DUPLICATE = answer(200, { ok: true, duplicate: true });
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
  const text = '[channel-sdk] webhook ' + info.stage + (info.status ? ' -> ' + info.status : '') + ': ' + messageOf(error);
  (info.level === 'error' ? console.error : console.warn)(text);
}

export function createHandlerFactory(crypto: Crypto) {
  // Documented where it is exported: src/server.ts.
  return function createWebhookHandler(options: WebhookHandlerOptions): WebhookHandler {
    const o = options || ({} as WebhookHandlerOptions);
    const { allowUnsigned = false, maxBodyBytes = 1024 * 1024, onLogisticsUpdated, onEvent, slowCallbackMs = 7000, dedup, dedupTimeoutMs = 1000 } = o;
    if (typeof onLogisticsUpdated !== 'function') throw new ConfigError('createWebhookHandler needs onLogisticsUpdated: async (event) => { ... }');
    if (typeof o.secret !== 'function' && !isSecret(o.secret) && !allowUnsigned) {
      throw new ConfigError(
        'createWebhookHandler: secret is empty. Pass the webhook secret from the integration configuration; to read it at the first request instead of at import (e.g. for next build), pass a function: secret: () => process.env.CHANNEL_WEBHOOK_SECRET. With no secret configured at all: allowUnsigned: true',
      );
    }
    if (!(maxBodyBytes > 0)) throw new ConfigError('maxBodyBytes must be a positive number of bytes');
    if (dedup !== undefined && (typeof dedup?.claim !== 'function' || typeof dedup.release !== 'function')) {
      throw new ConfigError('dedup must be a store with claim(key) and release(key), e.g. createMemoryDedupStore()');
    }
    const onError = o.onError || defaultReport;
    // A reporter that throws changes no answer (and cannot throw out of the slow-callback timer).
    const report = (error: unknown, info: WebhookErrorInfo) => {
      try {
        onError(error, info);
      } catch {
        // ignored on purpose
      }
    };
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
      const body = await incoming.body(maxBodyBytes);
      if (!body.ok) {
        if (body.reason === 'too-large') return reject(TOO_LARGE, new Error('body larger than maxBodyBytes (' + maxBodyBytes + ')'), 'size');
        if (body.reason === 'unreadable') return reject(UNREADABLE, body.error, 'body');
        const message =
          'the push body was read by something else before the webhook handler, which needs the raw bytes to check the signature. ' + CONSUMED_ADVICE[incoming.framework];
        return reject(answer(500, { error: message }), new ConfigError(message), 'body', 'error');
      }
      const rawBody = body.bytes;
      if (secret !== '') {
        let valid: boolean | Promise<boolean>;
        try {
          valid = crypto.verifyHmac(secret, rawBody, signature as string);
        } catch {
          valid = false;
        }
        if (typeof valid !== 'boolean') valid = await valid.then(undefined, () => false);
        if (!valid) return reject(UNAUTHORIZED, withoutStack(signatureMismatch), 'signature');
      }
      let event: WebhookEvent;
      try {
        event = parsePayload(rawBody, crypto.utf8);
      } catch (error) {
        return reject(INVALID, error, 'payload');
      }
      let key: Promise<string> | undefined;
      const context: WebhookContext = { rawBody, dedupKey: () => (key ||= crypto.sha256Hex(rawBody)), request: incoming.native };
      if (!dedup) return deliver(event, context);
      return deliverOnce(event, context);
    };

    async function deliverOnce(event: WebhookEvent, context: WebhookContext): Promise<Outgoing> {
      const key = await context.dedupKey();
      const running = inflight.get(key);
      if (running) {
        const out = await running;
        report(new Error('a repeat of a push in progress here; answered with its outcome'), { stage: 'duplicate', level: 'info', status: out.status });
        return out;
      }
      let claimed: unknown = true;
      let out: Outgoing = FAILED;
      let settle!: (out: Outgoing) => void;
      inflight.set(key, new Promise((resolve) => (settle = resolve)));
      try {
        try {
          claimed = await bounded(() => dedup!.claim(key), dedupTimeoutMs, 'claim');
        } catch (error) {
          report(error, { stage: 'dedup', level: 'warn' }); // processed anyway: a repeat beats a loss
        }
        if (claimed === false) {
          report(new Error('push already handled (same body); acknowledged without calling the callback'), { stage: 'duplicate', level: 'info', status: 200 });
          return (out = DUPLICATE);
        }
        out = await deliver(event, context);
        if (out !== OK) {
          // Give the claim back so that the service's next delivery is processed.
          await bounded(() => dedup!.release(key), dedupTimeoutMs, 'release').catch((error: unknown) => report(error, { stage: 'dedup', level: 'warn' }));
        }
        return out;
      } finally {
        inflight.delete(key);
        settle(out);
      }
    }

    // Callbacks in progress, watched by one timer rather than a timer per push.
    const running = new Set<{ started: number; reported: boolean }>();
    let watcher: ReturnType<typeof setInterval> | undefined;
    const watch = () => {
      const now = Date.now();
      for (const call of running) {
        if (call.reported || now - call.started < slowCallbackMs) continue;
        call.reported = true;
        report(
          new Error('the callback has run ' + slowCallbackMs + ' ms; the service stops waiting at 8 s and records a failure. Acknowledge first and process in the background (enqueue, then return)'),
          { stage: 'slow', level: 'warn', elapsedMs: now - call.started },
        );
      }
    };

    async function deliver(event: WebhookEvent, context: WebhookContext): Promise<Outgoing> {
      const call = { started: Date.now(), reported: false };
      running.add(call);
      if (!watcher) {
        watcher = setInterval(watch, Math.min(500, Math.max(5, slowCallbackMs / 8)));
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
  };
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

/**
 * An error made without capturing a stack: forged pushes are refused at line rate, a stack
 * trace would be most of their cost, and it would only point into this file.
 */
function withoutStack<E>(make: () => E): E {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Runs a store call, refusing to wait for it longer than `ms`. */
function bounded<T>(call: () => T | Promise<T>, ms: number, what: string): Promise<T> {
  let result: T | Promise<T>;
  try {
    result = call();
  } catch (error) {
    return Promise.reject(error);
  }
  if (typeof (result as Promise<T> | null)?.then !== 'function') return Promise.resolve(result);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, rejectTimeout) => {
    timer = setTimeout(() => rejectTimeout(new Error('the dedup store did not answer ' + what + ' within ' + ms + ' ms')), ms);
  });
  return Promise.race([Promise.resolve(result), timeout]).finally(() => clearTimeout(timer));
}
