import { AbortError } from '../errors/AbortError.js';
import type { ErrorContext } from '../errors/ChannelError.js';
import type { SignalLike } from './types.js';

export function abortError(signal: SignalLike, context: ErrorContext): AbortError {
  return new AbortError('request aborted through its signal', Object.assign({ cause: signal.reason }, context));
}

/**
 * Settles like `promise`, or rejects with AbortError as soon as `signal` aborts. The
 * promise itself goes on: a token refresh shared with other requests must not be cancelled.
 */
export function raceSignal<T>(promise: Promise<T>, signal: SignalLike | undefined, context: ErrorContext): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortError(signal, context));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal, context));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Waits `ms`, or rejects with AbortError when `signal` aborts first. */
export function sleep(ms: number, signal: SignalLike | undefined, context: ErrorContext): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const wait = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return raceSignal(wait, signal, context).then(undefined, (error: unknown) => {
    if (timer !== undefined) clearTimeout(timer);
    throw error;
  });
}
