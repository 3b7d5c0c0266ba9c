import { AbortError } from '../../errors/AbortError.js';
import { TimeoutError } from '../../errors/TimeoutError.js';
import type { ErrorContext } from '../../errors/ChannelError.js';
import { withoutStack } from '../../shared/errors.js';
import { raceSignal, sleep, type SignalLike } from '../../shared/signal.js';

/**
 * The reason a request's own signal gets when clearToken() fences it, or a new tokenStore
 * key() (another user signed in without clearToken()).
 */
export const cleared = { clearToken: true };

/**
 * The AbortError for a request whose signal fired (a TimeoutError when its reason is one). Built
 * without stack frames: its stack would only show the abort machinery, and one signal may cancel
 * thousands of requests at once.
 */
export function abortError(signal: SignalLike, context: ErrorContext): AbortError | TimeoutError {
  return withoutStack(() => {
    const { reason } = signal;
    if (reason === cleared)
      return new AbortError(
        'clearToken() ran while this request was under way (a logout, or a new tokenStore key()); it is not sent again, with any token',
        context,
      );
    // A signal that timed out (AbortSignal.timeout(), ofetch's `timeout`) ends the call as a timeout, as fetch would.
    const error =
      reason && (reason as Error).name === 'TimeoutError'
        ? new TimeoutError('the signal of this request timed out', context)
        : new AbortError('request aborted through its signal', context);
    if (reason !== undefined) (error as { cause?: unknown }).cause = reason;
    return error;
  });
}

/** {@link raceSignal} for a request's own signal: rejects with its AbortError. */
export const raceRequest = <T>(promise: Promise<T>, signal: SignalLike, context: ErrorContext): Promise<T> =>
  raceSignal(promise, signal, () => abortError(signal, context), false);

/** Waits `ms`, or rejects with AbortError when `signal` (a request's own) aborts first. */
export const sleepRequest = (ms: number, signal: SignalLike, context: ErrorContext): Promise<void> => sleep(ms, signal, () => abortError(signal, context));
