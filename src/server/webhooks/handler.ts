import { describeValue } from '../../shared/check.js';
import { bounded } from '../../shared/bounded.js';
import { withoutStack } from '../../shared/errors.js';
import { safeReport } from '../../shared/report.js';
import { ConfigError } from '../../errors/ConfigError.js';
import type { UnknownWebhookEvent, WebhookEvent } from '../../schemas/logistics.js';
import { createBodyGuard } from './body-guard.js';
import { isSignatureHex, type Crypto } from '../crypto/crypto.js';
import type { DedupLease, DedupState, WebhookDedupStore } from './dedup.js';
import {
  handlerSettings,
  type WebhookContext,
  type WebhookErrorInfo,
  type WebhookHandler,
  type WebhookHandlerOptions,
  type WebhookInboxHandlerOptions,
} from './handler-options.js';
import { inboxIntake } from './inbox/intake.js';
import { answer, CONSUMED_ADVICE, fetchRoute, type BodyResult, type Core, type Incoming, type Outgoing } from '../http/route.js';
import { isLogisticsUpdated, parsePayload } from './parse.js';
import { SIGNATURE_HEADER, signatureMismatch, signatureMissing, checkSignature, type Secrets } from './verify.js';
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

const newLeaseId = () => globalThis.crypto.randomUUID();

/** The webhook route over one crypto (what `createWebhookHandler` runs). */
export function createHandler(crypto: Crypto, options: WebhookHandlerOptions | WebhookInboxHandlerOptions): WebhookHandler {
  const { onLogisticsUpdated, onEvent, dedup, maxBodyBytes, bodyTimeoutMs, maxBufferedBytes, slowCallbackMs, dedupTimeoutMs, dedupLeaseMs, onError, secrets } =
    handlerSettings(options);
  const bodies = createBodyGuard(bodyTimeoutMs, maxBufferedBytes);
  const busy = answer(
    503,
    { error: 'too many request bodies in flight; retry later' },
    { 'retry-after': String(Math.ceil(bodyTimeoutMs / 1000)), connection: 'close' },
  );
  const inProgress = answer(
    503,
    { error: 'this push is being processed by another delivery; retry later' },
    { 'retry-after': String(Math.ceil(dedupLeaseMs / 1000)) },
  );
  const report = safeReport(onError);
  // With an inbox, a verified push is stored and answered; no callback runs here.
  const intake = inboxIntake(crypto, options as WebhookInboxHandlerOptions, report);
  const storeCall = <T>(call: () => T | Promise<T>, what: string) =>
    bounded(call, dedupTimeoutMs, () => new Error('the dedup store did not answer ' + what + ' within ' + dedupTimeoutMs + ' ms'));
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
    if (secret !== '' && !isSignatureHex(signature))
      return reject(
        UNAUTHORIZED,
        withoutStack(() => signatureMissing(signature)),
        'signature',
      );
    const ticket = bodies.open();
    try {
      return await verified(incoming, secret, signature, await incoming.body(maxBodyBytes, ticket));
    } finally {
      ticket.close();
    }
  };

  async function verified(incoming: Incoming, secret: Secrets | '', signature: string | undefined, body: BodyResult): Promise<Outgoing> {
    if (!body.ok) {
      if (body.reason === 'too-large') return reject(TOO_LARGE, new Error('body larger than maxBodyBytes (' + maxBodyBytes + ')'), 'size');
      if (body.reason === 'unreadable') return reject(UNREADABLE, body.error, 'body');
      if (body.reason === 'timeout')
        return reject(
          BODY_TIMEOUT,
          new Error('the body did not arrive within bodyTimeoutMs (' + bodyTimeoutMs + ' ms); answered 408 and closed the connection'),
          'body',
        );
      if (body.reason === 'busy') {
        return reject(
          busy,
          new Error(
            'request bodies in flight hold maxBufferedBytes (' + maxBufferedBytes + ' bytes); refused a stalled or new body with 503 and closed its connection',
          ),
          'body',
        );
      }
      const message =
        'the push body was read by something else before the webhook handler, which needs the raw bytes to check the signature. ' +
        CONSUMED_ADVICE[incoming.framework];
      return reject(answer(500, { error: message }), new ConfigError(message), 'body', 'error');
    }
    const rawBody = body.bytes;
    if (secret !== '') {
      // Awaited only when the crypto is asynchronous (Web Crypto): node:crypto answers at once.
      let valid = checkSignature(crypto, rawBody, signature, secret);
      if (typeof valid !== 'boolean') valid = await valid;
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
    if (intake) return intake(event, rawBody, context.dedupKey);
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
          throw new Error("the dedup store's claim answered " + describeValue(state) + "; expected 'claimed', 'running' or 'done'");
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
        report(new Error('another delivery of this push is being processed; answered 503 so that the service delivers it again'), {
          stage: 'duplicate',
          level: 'info',
          status: 503,
        });
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
          report(
            new Error(
              'the lease on this push lapsed while its callback ran (the event loop or the store stalled past dedupLeaseMs); another delivery may run it too',
            ),
            { stage: 'dedup', level: 'warn' },
          );
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
        new Error(
          'the callback has run ' +
            slowCallbackMs +
            ' ms; the service stops waiting at 8 s and records a failure. Acknowledge first and process in the background (enqueue, then return)',
        ),
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
