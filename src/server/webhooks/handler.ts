import { describeValue } from '../../shared/check.js';
import { bounded } from '../../shared/bounded.js';
import { sleep } from '../../shared/signal.js';
import { createCallbackRunner, FAILED, OK, UNFINISHED } from './callbacks.js';
import { withoutStack } from '../../shared/errors.js';
import { safeReport } from '../../shared/report.js';
import { ConfigError } from '../../errors/ConfigError.js';
import type { WebhookEvent } from '../../schemas/logistics.js';
import { createBodyGuard } from '../http/body-guard.js';
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
import { INBOX_DUPLICATE, INBOX_UNAVAILABLE, inboxIntake } from './inbox/intake.js';
import { webhookTelemetry, type PushNote } from '../telemetry/webhook-telemetry.js';
import { answer, CONSUMED_ADVICE, fetchRoute, stoppedBodyAnswers, type BodyResult, type Incoming, type Outgoing } from '../http/route.js';
import { parsePayload } from './parse.js';
import { SIGNATURE_HEADER, signatureMismatch, signatureMissing, checkSignature, type Secrets } from './verify.js';
const DUPLICATE = answer(200, { ok: true, duplicate: true });
const NOT_POST = answer(405, { error: 'method not allowed' }, { allow: 'POST' });
const BAD_REQUEST = answer(400, { error: 'bad request' });
const UNAUTHORIZED = answer(401, { error: 'invalid signature' });
const INVALID = answer(400, { error: 'invalid payload' });
const TOO_LARGE = answer(413, { error: 'payload too large' });
const UNREADABLE = answer(400, { error: 'could not read the body' });
const NO_SECRET = answer(500, { error: 'webhook secret not configured' });
// How long a repeat that finds the push in progress (here or on another instance) waits for
// that delivery's outcome: well inside the service's 8-second window.
const REPEAT_WAIT_MS = 5000;

/** The webhook route over one crypto (what `createWebhookHandler` runs). */
export function createHandler(crypto: Crypto, options: WebhookHandlerOptions | WebhookInboxHandlerOptions): WebhookHandler {
  const settings = handlerSettings(options);
  const { dedup, maxBodyBytes, bodyTimeoutMs, maxBufferedBytes, dedupTimeoutMs, dedupLeaseMs, onError, secrets } = settings;
  const bodies = createBodyGuard(bodyTimeoutMs, maxBufferedBytes);
  const stopped = stoppedBodyAnswers(bodyTimeoutMs);
  const inProgress = answer(
    503,
    { error: 'this push is being processed by another delivery; retry later' },
    { 'retry-after': String(Math.ceil(dedupLeaseMs / 1000)) },
  );
  const report = safeReport(onError);
  // The error.type of a push answered with one of the fixed answers.
  const reasons = (): Map<Outgoing, string> =>
    new Map([
      [BAD_REQUEST, 'request'],
      [NOT_POST, 'method'],
      [NO_SECRET, 'config'],
      [UNAUTHORIZED, 'signature'],
      [TOO_LARGE, 'size'],
      [UNREADABLE, 'body'],
      [stopped.timeout, 'body_timeout'],
      [stopped.busy, 'busy'],
      [INVALID, 'payload'],
      [DUPLICATE, 'duplicate'],
      [INBOX_DUPLICATE, 'duplicate'],
      [inProgress, 'in_progress'],
      [INBOX_UNAVAILABLE, 'inbox'],
      [FAILED, 'callback'],
      [UNFINISHED, 'callback_timeout'],
    ]);
  const telemetry = webhookTelemetry(settings.telemetry, reasons);
  // With an inbox, a verified push is stored and answered; no callback runs here.
  const intake = inboxIntake(crypto, options as WebhookInboxHandlerOptions, report, telemetry);
  const storeCall = <T>(call: () => T | Promise<T>, what: string) =>
    bounded(call, dedupTimeoutMs, () => new Error('the dedup store did not answer ' + what + ' within ' + dedupTimeoutMs + ' ms'));
  const deliver = createCallbackRunner({ ...settings, report, storeCall, telemetry });
  // Pushes in progress in this process, by dedup key: a repeat waits for the first one's answer.
  const inflight = new Map<string, Promise<Outgoing>>();

  function reject(out: Outgoing, error: unknown, stage: WebhookErrorInfo['stage'], level: WebhookErrorInfo['level'] = 'warn'): Outgoing {
    report(error, { stage, level, status: out.status });
    return out;
  }

  const core = async (incoming: Incoming, note?: PushNote): Promise<Outgoing> => {
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
    // The body leaves maxBufferedBytes once answered, or once the inbox lets go of it (later, when
    // its append outlived the answer: a frozen Redis).
    let held: PromiseLike<unknown> | undefined;
    try {
      return await verified(incoming, secret, signature, await incoming.body(maxBodyBytes, ticket), note, (until) => (held = until));
    } finally {
      if (held) held.then(ticket.close.bind(ticket), ticket.close.bind(ticket));
      else ticket.close();
    }
  };

  async function verified(
    incoming: Incoming,
    secret: Secrets | '',
    signature: string | undefined,
    body: BodyResult,
    note: PushNote | undefined,
    hold: (until: PromiseLike<unknown>) => void,
  ): Promise<Outgoing> {
    if (!body.ok) {
      if (body.reason === 'too-large') return reject(TOO_LARGE, new Error('body larger than maxBodyBytes (' + maxBodyBytes + ')'), 'size');
      if (body.reason === 'unreadable') return reject(UNREADABLE, body.error, 'body');
      if (body.reason === 'timeout')
        return reject(
          stopped.timeout,
          new Error('the body did not arrive within bodyTimeoutMs (' + bodyTimeoutMs + ' ms); answered 408 and closed the connection'),
          'body',
        );
      if (body.reason === 'busy') {
        return reject(
          stopped.busy,
          new Error(
            'request bodies in flight (being read, or held by an inbox append Redis has not answered) hold maxBufferedBytes (' +
              maxBufferedBytes +
              ' bytes); refused a stalled or new body with 503 and closed its connection',
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
      const verifying = telemetry?.stage('verify');
      let valid = checkSignature(crypto, rawBody, signature, secret);
      if (typeof valid !== 'boolean') valid = await valid;
      verifying?.end({ 'channel.webhook.verified': valid });
      if (!valid) return reject(UNAUTHORIZED, withoutStack(signatureMismatch), 'signature');
    }
    let event: WebhookEvent;
    try {
      event = parsePayload(rawBody, crypto.utf8);
    } catch (error) {
      return reject(INVALID, error, 'payload');
    }
    if (note) note.event = event.event;
    let key: Promise<string> | undefined;
    const context: WebhookContext = { rawBody, dedupKey: () => (key ||= crypto.sha256Hex(rawBody)), request: incoming.native };
    if (intake) return intake(event, rawBody, context.dedupKey, hold);
    if (!dedup) return deliver(event, context);
    return deliverOnce(dedup, event, context);
  }

  // A repeat is acknowledged only once a delivery's callback succeeded (`done`). A repeat that
  // finds one running (here, or elsewhere: a live lease) waits for its outcome, up to
  // REPEAT_WAIT_MS: 200 when it succeeded, the callback run here when it failed (its lease is
  // released), 503 when it has not finished, so that the service delivers it again. A delivery
  // that dies or hangs leaves nothing behind that outlives its lease.
  async function deliverOnce(store: WebhookDedupStore, event: WebhookEvent, context: WebhookContext): Promise<Outgoing> {
    const key = await context.dedupKey();
    const until = Date.now() + REPEAT_WAIT_MS;
    const here = inflight.get(key);
    const deduping = telemetry?.stage('dedup');
    if (here) {
      const out = await bounded(
        () => here,
        REPEAT_WAIT_MS,
        () => undefined,
      ).catch(() => undefined);
      deduping?.end({ 'channel.dedup.state': 'joined' });
      const status = out ? out.status : 503;
      report(new Error('a repeat of a push in progress here; answered with its outcome' + (out ? '' : ': not finished within 5 s')), {
        stage: 'duplicate',
        level: 'info',
        status,
      });
      return out || inProgress;
    }
    let out: Outgoing = FAILED;
    let settle!: (out: Outgoing) => void;
    inflight.set(key, new Promise((resolve) => (settle = resolve)));
    try {
      const lease: DedupLease = { id: crypto.randomId(), ms: dedupLeaseMs };
      let state = await claim(store, key, lease);
      // Another delivery holds a live lease: watch for its outcome (a claim again, now and then).
      for (let pause = 50; state === 'running' && Date.now() < until; pause = Math.min(pause * 2, 250)) {
        await sleep(Math.min(pause, until - Date.now()));
        state = await claim(store, key, lease, true);
      }
      deduping?.end({ 'channel.dedup.state': state ?? 'unavailable' });
      if (state === 'done') {
        report(new Error('push already processed (same body); acknowledged without calling the callback'), { stage: 'duplicate', level: 'info', status: 200 });
        return (out = DUPLICATE);
      }
      if (state === 'running' || state === 'unknown') {
        report(
          new Error('another delivery of this push is being processed and did not finish within 5 s; answered 503 so that the service delivers it again'),
          {
            stage: 'duplicate',
            level: 'info',
            status: 503,
          },
        );
        return (out = inProgress);
      }
      out = await deliver(event, context, state === 'claimed' ? { store, key, lease } : undefined);
      // A callback cut off at callbackTimeoutMs may still be running: its lease is left to lapse.
      if (out === UNFINISHED) return out;
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

  /**
   * The store's claim, bounded by dedupTimeoutMs. A store that fails answers undefined: the push
   * is processed anyway (a repeat beats a loss), unless another delivery was seen running
   * (`watching`): then 'unknown', and the answer is 503.
   */
  async function claim(store: WebhookDedupStore, key: string, lease: DedupLease, watching = false): Promise<DedupState | 'unknown' | undefined> {
    try {
      const state = await storeCall(() => store.claim(key, lease), 'claim');
      if (state === 'claimed' || state === 'running' || state === 'done') return state;
      throw new Error("the dedup store's claim answered " + describeValue(state) + "; expected 'claimed', 'running' or 'done'");
    } catch (error) {
      report(error, { stage: 'dedup', level: 'warn' });
      return watching ? 'unknown' : undefined;
    }
  }

  return fetchRoute(telemetry ? telemetry.wrap(core) : core);
}
