import { AbortError } from '../errors/AbortError.js';
import type { ErrorContext } from '../errors/ChannelError.js';
import { withoutStack } from '../shared/errors.js';
import { raceSignal, sleep, type SignalLike } from '../shared/signal.js';

/**
 * The reason a request's own signal gets when clearToken() fences it, or a new tokenStore
 * key() (another user signed in without clearToken()).
 */
export const cleared = { clearToken: true };

/**
 * The AbortError for a request whose signal fired. Built without stack frames: its stack
 * would only show the abort machinery, and one signal may cancel thousands of requests at once.
 */
export function abortError(signal: SignalLike, context: ErrorContext): AbortError {
  return withoutStack(() => {
    if (signal.reason === cleared)
      return new AbortError(
        'clearToken() ran while this request was under way (a logout, or a new tokenStore key()); it is not sent again, with any token',
        context,
      );
    const error = new AbortError('request aborted through its signal', context);
    if (signal.reason !== undefined) (error as { cause?: unknown }).cause = signal.reason;
    return error;
  });
}

/** {@link raceSignal} for a request's own signal: rejects with its AbortError. */
export const raceRequest = <T>(promise: Promise<T>, signal: SignalLike, context: ErrorContext): Promise<T> =>
  raceSignal(promise, signal, () => abortError(signal, context), false);

/** Waits `ms`, or rejects with AbortError when `signal` (a request's own) aborts first. */
export const sleepRequest = (ms: number, signal: SignalLike, context: ErrorContext): Promise<void> => sleep(ms, signal, () => abortError(signal, context));
