import { isChannelError, type ChannelError } from '../errors/ChannelError.js';
import { NetworkError } from '../errors/NetworkError.js';
import { UnauthorizedError } from '../errors/UnauthorizedError.js';
import type { Stop } from './cancel.js';
import type { Call } from './call-options.js';
import type { ClientEvents, Events, RequestInfo } from './events.js';
import type { Redactor } from './redactor.js';
import { delayOf, retryAfterMs } from './retry.js';
import { abortError, raceRequest, sleepRequest } from './request-abort.js';
import type { HeldToken, TokenManager } from './token-types.js';
import type { Progress, SignalLike, Transport, TransportResponse } from './types.js';

/** The attempt loop of one call, as `createAttempts` returns it. */
export type Attempts = (call: Call, requestId: number, signal: Stop, drop: boolean, progress?: (p: Progress) => void) => Promise<TransportResponse>;

/** The attempt loop of a client, over its transport, token manager, events and redactor. */
export function createAttempts(transport: Transport, now: () => number, tokens: TokenManager, events: Events, redact: Redactor): Attempts {
  /**
   * The attempts of one call: token, send, 401 -> one shared forced refresh -> one replay,
   * transient retries. Resolves to the final response (any status), for settle() to read.
   */
  async function attempts(call: Call, requestId: number, signal: Stop, drop: boolean, progress?: (p: Progress) => void): Promise<TransportResponse> {
    const { method, url, context, policy } = call;
    const retryable = policy.methods.indexOf(method) >= 0;
    // A token already held is used at once: an await here would let whatever else is queued run
    // before the host (or fetch) is even called, on every request.
    const first = token(tokens.get(), signal, context);
    let held = 'then' in first ? await first : first;
    let retries = 0;
    let replayed = false;
    let rejectedToken = '';
    let attempt = 0;
    const note = <K extends 'request' | 'response' | 'unauthorized' | 'retry'>(type: K, extra: Omit<ClientEvents[K], keyof RequestInfo>) => {
      // A retry is numbered as the attempt it announces. No payload is built for nobody.
      if (events.heard(type))
        events.emit(type, Object.assign({ requestId, method, url, attempt: type === 'retry' ? attempt + 1 : attempt }, extra) as ClientEvents[K]);
    };
    for (;;) {
      attempt++;
      note('request', {});
      // Another user since the token was taken ends this request (it fences it).
      tokens.sync();
      // After the event: a listener may have called clearToken() or aborted.
      if (signal.aborted) throw abortError(signal, context);
      const startedAt = now();
      let response: TransportResponse | undefined;
      let failure: ChannelError | undefined;
      try {
        // A fresh request object per attempt: nothing consumed by an earlier attempt is reused.
        // The transport drops the connection on the caller's signal; for a clearToken() fence
        // it only must not start a queued attempt, and the request ends here at once.
        const headers = Object.assign({}, call.headers, { authorization: 'Bearer ' + held.token });
        // A queued attempt takes the token held when it leaves: an answer read meanwhile may
        // have shown, by the server's clock, that this one has ended.
        const rebind = () => {
          const next = token(tokens.get(), signal, context);
          const use = (h: HeldToken) => void ((held = h), (headers.authorization = 'Bearer ' + h.token));
          return 'then' in next ? next.then(use) : use(next);
        };
        const sent = transport({
          method,
          url,
          headers,
          body: call.body,
          timeout: call.timeout,
          signal,
          dropOnAbort: drop,
          file: call.file,
          onProgress: progress,
          hostOptions: call.hostOptions,
          raw: call.raw,
          rebind,
        });
        response = await (drop ? sent : raceRequest(sent, signal, context));
      } catch (error) {
        failure = transportError(error, signal, context, redact);
      }
      if (response) tokens.observe(response.headers.get('date'), startedAt, now());
      tokens.sync();
      // Whatever the transport did, a cancelled request is not resolved, replayed or retried.
      if (signal.aborted) throw failure && failure.code === 'ABORTED' ? failure : abortError(signal, context);
      let reason: 'network' | 'timeout' | 'status';
      let status: number | undefined;
      let wait: number | undefined;
      if (!response) {
        failure = failure as ChannelError;
        // Only a lost or late response is transient; an abort or a host's configuration error is not.
        if ((failure.code !== 'NETWORK_ERROR' && failure.code !== 'TIMEOUT') || !retryable || retries >= policy.limit) throw failure;
        reason = failure.code === 'TIMEOUT' ? 'timeout' : 'network';
      } else {
        status = response.status;
        note('response', { status, durationMs: now() - startedAt });
        if (status === 401) {
          note('unauthorized', { tokenVersion: held.version });
          if (replayed) {
            const error = new UnauthorizedError(
              'the service rejected the token again after a forced refresh (HTTP 401 on ' +
                method +
                ' ' +
                url +
                '); ' +
                (held.token === rejectedToken
                  ? 'tokenProvider returned the same token for forceRefresh: true, so it must bypass its own cache then'
                  : 'the user needs to sign in again'),
              context,
            );
            events.emit('auth:failed', { requestId, method, url, error });
            throw error;
          }
          replayed = true;
          rejectedToken = held.token;
          held = await token(tokens.afterUnauthorized(held.version), signal, context);
          note('retry', { reason: 'unauthorized', delayMs: 0 });
          continue;
        }
        const transient = retryable && retries < policy.limit && policy.statusCodes.indexOf(status) >= 0;
        if (transient) wait = retryAfterMs(response.headers.get('retry-after'), now());
        // A Retry-After beyond maxRetryAfter ends the retries: the error is returned at once.
        if (!transient || (wait !== undefined && wait > policy.maxRetryAfter)) return response;
        reason = 'status';
      }
      retries++;
      const delayMs = wait === undefined ? delayOf(policy, retries) : wait;
      note('retry', { reason, status, delayMs });
      await sleepRequest(delayMs, signal, context);
    }
  }

  return attempts;
}

function token(held: HeldToken | Promise<HeldToken>, signal: SignalLike, context: { method: string; url: string }) {
  return 'then' in held ? raceRequest(held, signal, context) : held;
}

function transportError(error: unknown, signal: SignalLike, context: { method: string; url: string }, redact: Redactor): ChannelError {
  // The transport's own AbortError for our signal is the one to keep: one error per
  // cancelled request (10,000 requests cancelled at once build 10,000 stacks, not 30,000).
  if (signal.aborted) return isChannelError(error) && error.code === 'ABORTED' && error.url === context.url ? error : abortError(signal, context);
  if (isChannelError(error)) return error;
  return new NetworkError(
    'request failed before a response arrived (' + redact.text(error instanceof Error ? error.message : 'unknown error') + ')',
    Object.assign(
      {
        cause: redact.cause(error),
      },
      context,
    ),
  );
}
