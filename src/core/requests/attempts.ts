import { isChannelError, type ChannelError } from '../../errors/ChannelError.js';
import { messageOf } from '../../shared/message.js';
import { NetworkError } from '../../errors/NetworkError.js';
import { UnauthorizedError } from '../../errors/UnauthorizedError.js';
import type { Call } from './call.js';
import type { ClientEvents, Events, RequestInfo } from '../events.js';
import type { Redactor } from '../redactor.js';
import { delayOf, retryAfterMs } from './retry.js';
import { abortError, raceRequest, sleepRequest } from './request-abort.js';
import type { HeldToken, TokenManager } from '../token-lifecycle/token-types.js';
import type { SignalLike, TransportRequest, TransportResponse } from '../types.js';
import { runBeforeSend, type Outgoing } from './before-send.js';
import type { BeforeSend } from './send-attempt.js';
import type { ClientTelemetry } from '../telemetry-hooks.js';
import type { Pacing } from '../app-life/pacing.js';

/** What the transport is sent for one attempt, with the token it carries, its call and whether it is not the first. */
type Attempt = TransportRequest & { held: HeldToken; call: Call; again: boolean; unsent?: 'online' | 'shown' };

/** The attempt loop of one call, as `createAttempts` returns it. */
export type Attempts = (call: Call) => Promise<TransportResponse>;

/** What the attempt loop of a client works over (each call brings its own transport: `Call.transport`). */
export interface AttemptsOptions {
  now: () => number;
  tokens: TokenManager;
  events: Events;
  redact: Redactor;
  beforeSend?: BeforeSend;
  telemetry?: ClientTelemetry;
  /** When attempts may go: the app's life, the network, the retry budget. */
  pacing: Pacing;
}

/** The attempt loop of a client, over its token manager, events and redactor, with its `beforeSend`. */
export function createAttempts(options: AttemptsOptions): Attempts {
  const { now, tokens, events, redact, beforeSend, telemetry, pacing } = options;
  /** Emits a request event of `call`'s attempt number `attempt`. No payload is built for nobody. */
  function note<K extends 'request' | 'response' | 'unauthorized' | 'retry'>(
    type: K,
    call: Call,
    attempt: number,
    extra?: Omit<ClientEvents[K], keyof RequestInfo>,
  ): void {
    // A retry is numbered as the attempt it announces.
    if (events.heard(type))
      events.emit(
        type,
        Object.assign(
          { requestId: call.requestId, method: call.method, url: call.url, attempt: type === 'retry' ? attempt + 1 : attempt },
          extra,
        ) as ClientEvents[K],
      );
  }

  /**
   * `TransportRequest.rebind`, called on the request as a queued attempt leaves: it takes the token
   * held then (an answer read meanwhile may have shown, by the server's clock, that its own has
   * ended) into its headers and `held`, which the loop reads back, asked for through the pacing
   * (not from a provider offline). The network (or the app, before a resend) may have gone while
   * it was queued: it leaves unsent (`unsent`), its slot freed, and the loop takes it back to the
   * gate, as a call not sent yet: it waits, its own offline.wait counting, or fails as such a call
   * does (a write that may wait waits too: nothing was sent). One function per client: an attempt
   * that is not queued allocates nothing for it.
   */
  function rebind(this: Attempt): Promise<void> | void {
    const { call } = this;
    const until = pacing.holds(call, this.again);
    if (until)
      return Promise.reject(new NetworkError(call.method + ' ' + call.url + ' left the host queue unsent (' + (this.unsent = until) + ')', call.context));
    const next = pacing.token(call, () => token(tokens.get, call.stop, call.context));
    const use = (h: HeldToken) => void ((this.held = h), (this.headers.authorization = 'Bearer ' + h.token));
    return 'then' in next ? next.then(use) : use(next);
  }

  /**
   * The attempts of one call: token, send, 401 -> one shared forced refresh -> one replay,
   * transient retries. Resolves to the final response (any status), which the caller reads
   * (client.ts: settle()).
   */
  async function attempts(call: Call): Promise<TransportResponse> {
    const { method, url, context, policy, stop } = call;
    const retryable = policy.methods.indexOf(method) >= 0;
    // A token already held is used at once: an await here would let whatever else is queued run
    // before the host (or fetch) is even called, on every request.
    // The context active as the call starts stays its spans' parent, across the awaits below.
    const parent = telemetry && telemetry.active();
    const ask = (get: () => HeldToken | Promise<HeldToken>) =>
      pacing.token(call, () => (telemetry ? telemetry.within(parent, () => token(get, stop, context)) : token(get, stop, context)));
    // Offline, nothing is sent and the provider is not asked: the call waits for the network, or
    // fails. Each wait is checked again as it ends: the network may have gone again meanwhile.
    for (let offline = pacing.gate(call, false); offline; offline = pacing.gate(call, false)) await offline;
    const first = ask(tokens.get);
    let held = 'then' in first ? await first : first;
    let retries = 0;
    let replayed = false;
    let rejectedToken = '';
    let attempt = 0;
    // Why this attempt follows another (the retry event's reason), for its span.
    let resend: string | undefined;
    for (;;) {
      attempt++;
      // Before every send: the network (it may have gone during the token's wait), and the app's
      // return before a retry where the host cuts a hidden app's requests. A token that ended
      // during the wait is replaced.
      for (let wait = pacing.gate(call, attempt > 1); wait; wait = pacing.gate(call, attempt > 1)) {
        await wait;
        held = await ask(tokens.get);
      }
      note('request', call, attempt);
      // Another user since the token was taken ends this request (it fences it).
      tokens.sync();
      // After the event: a listener may have called clearToken() or aborted.
      if (stop.aborted) throw abortError(stop, context);
      let outgoing: Outgoing | Promise<Outgoing> | undefined;
      if (beforeSend) {
        // Per attempt, on the call's own headers and body; awaited only when the hook is async.
        outgoing = runBeforeSend({ hook: beforeSend, call, attempt, redact });
        if ('then' in outgoing) outgoing = await outgoing;
        // The hook may have called clearToken() or aborted.
        if (stop.aborted) throw abortError(stop, context);
      }
      const startedAt = now();
      const mark = pacing.mark();
      let response: TransportResponse | undefined;
      let failure: ChannelError | undefined;
      let end: ((status?: number, error?: string) => void) | undefined;
      const request = attemptRequest(call, held, attempt > 1, rebind, outgoing as Outgoing | undefined);
      try {
        end = telemetry && telemetry.attempt({ method, url, attempt, resend, headers: request.headers, parent });
        // The transport drops the connection on the caller's signal; for a clearToken() fence
        // it only must not start a queued attempt, and the request ends here at once.
        const sent = call.transport(request);
        response = await (call.dropOnAbort ? sent : raceRequest(sent, stop, context));
      } catch (error) {
        failure = transportError(error, stop, context, redact);
      }
      // The token the attempt went with: a queued one takes the token held as it leaves (rebind).
      held = request.held;
      if (end) end(response && response.status, failure && failure.code);
      if (response) tokens.observe(response.headers, startedAt, now());
      tokens.sync();
      // Whatever the transport did, a cancelled request is not resolved, replayed or retried.
      if (stop.aborted) {
        if (response && response.discard) response.discard();
        throw failure && failure.code === 'ABORTED' ? failure : abortError(stop, context);
      }
      // Left the host's queue unsent (rebind): back to the gate, which waits or fails it as a call
      // not sent yet. Not a retry (nothing was sent): no limit or budget spent.
      if (request.unsent) {
        const why = request.unsent === 'online' ? 'offline' : 'interrupted';
        note('retry', call, attempt, { reason: why, delayMs: 0 });
        resend = why;
        continue;
      }
      let reason: 'network' | 'timeout' | 'status';
      let status: number | undefined;
      let after: number | undefined;
      if (!response) {
        failure = failure as ChannelError;
        // Only a lost or late response is transient; an abort or a host's configuration error is not.
        const transient = failure.code === 'NETWORK_ERROR' || failure.code === 'TIMEOUT';
        // Lost offline, or cut while the app was hidden: sent again once the network or the app
        // is back (the gate above waits), not a retry. A write is not: it throws here.
        const lost = transient ? pacing.lost(call, failure, mark) : undefined;
        if (lost) {
          note('retry', call, attempt, { reason: lost, delayMs: 0 });
          resend = lost;
          continue;
        }
        if (!transient || !retryable || retries >= policy.limit) throw failure;
        reason = failure.code === 'TIMEOUT' ? 'timeout' : 'network';
        if (!pacing.retry(call, attempt, reason, undefined, false)) throw failure;
      } else {
        status = response.status;
        const failed = policy.statusCodes.indexOf(status) >= 0;
        // An answer, a 401 too: the retry budget refills.
        if (!failed) pacing.answered();
        // Its payload only for a listener (a call per response otherwise costs time in bench:fetch).
        if (events.heard('response')) note('response', call, attempt, { status, durationMs: now() - startedAt });
        if (status === 401) {
          note('unauthorized', call, attempt, { tokenVersion: held.version });
          if (replayed) {
            const error = new UnauthorizedError(
              'the service rejected the token again after a forced refresh (HTTP 401 on ' +
                method +
                ' ' +
                url +
                '); ' +
                (held.token === rejectedToken
                  ? "tokenProvider answered forceRefresh: true with the very token just rejected: a cache (its own, or a token route's forceRefreshWindow) handed it back; pass `rejected` on to the route"
                  : 'the user needs to sign in again'),
              context,
            );
            events.emit('auth:failed', { requestId: call.requestId, method, url, error });
            // A native call resolves to the 401 as its stack's own function would.
            if (call.kind === 'native') return response;
            throw error;
          }
          if (response.discard) response.discard();
          replayed = true;
          rejectedToken = held.token;
          const used = held.version;
          // The forced refresh is not asked for offline either.
          for (let down = pacing.gate(call, true); down; down = pacing.gate(call, true)) await down;
          held = await ask(() => tokens.afterUnauthorized(used));
          note('retry', call, attempt, { reason: 'unauthorized', delayMs: 0 });
          resend = 'unauthorized';
          if (telemetry) telemetry.replay();
          continue;
        }
        const transient = retryable && retries < policy.limit && failed;
        if (transient) after = retryAfterMs(response.headers.get('retry-after'), now());
        // A Retry-After beyond maxRetryAfter ends the retries: the error is returned at once. One
        // within it wins over the retry budget: the server said when it can take the request.
        if (!transient || (after !== undefined && after > policy.maxRetryAfter) || !pacing.retry(call, attempt, 'status', status, after !== undefined))
          return response;
        if (response.discard) response.discard();
        reason = 'status';
      }
      retries++;
      resend = reason;
      const delayMs = after === undefined ? delayOf(policy, retries) : after;
      note('retry', call, attempt, { reason, status, delayMs });
      await sleepRequest(delayMs, stop, context);
    }
  }

  return attempts;
}

/**
 * What the transport is sent for one attempt of `call` with `held` (and what beforeSend left): a
 * fresh object each time, so nothing an earlier attempt consumed is reused.
 */
function attemptRequest(call: Call, held: HeldToken, again: boolean, rebind: (this: Attempt) => Promise<void> | void, outgoing: Outgoing = call): Attempt {
  const headers = Object.assign({}, outgoing.headers);
  headers.authorization = 'Bearer ' + held.token;
  return {
    method: call.method,
    url: call.url,
    headers,
    body: outgoing.body,
    timeout: call.timeout,
    signal: call.stop,
    dropOnAbort: call.dropOnAbort,
    file: call.file,
    onProgress: call.progress && call.progress.report,
    hostOptions: call.hostOptions,
    raw: call.raw,
    passOn: call.passOn,
    held,
    call,
    again,
    rebind,
  };
}

/**
 * The token for an attempt of a call still under way: a fenced call (clearToken() or its signal,
 * in a listener of the event just emitted, say) asks for none, so no provider call is started for
 * it and nothing it would have obtained outlives the clear.
 */
function token(get: () => HeldToken | Promise<HeldToken>, signal: SignalLike, context: { method: string; url: string }) {
  if (signal.aborted) throw abortError(signal, context);
  const held = get();
  return 'then' in held ? raceRequest(held, signal, context) : held;
}

function transportError(error: unknown, signal: SignalLike, context: { method: string; url: string }, redact: Redactor): ChannelError {
  // The transport's own AbortError for our signal is the one to keep: one error per
  // cancelled request (10,000 requests cancelled at once build 10,000 stacks, not 30,000).
  if (signal.aborted) return isChannelError(error) && error.code === 'ABORTED' && error.url === context.url ? error : abortError(signal, context);
  if (isChannelError(error)) return error;
  return new NetworkError(
    'request failed before a response arrived (' + redact.text(messageOf(error)) + ')',
    Object.assign(
      {
        cause: redact.cause(error),
      },
      context,
    ),
  );
}
