import { ChannelError } from './ChannelError.js';

/**
 * One attempt took longer than `timeout` ms, or the call's `signal` timed out (its reason a
 * `TimeoutError`, as `AbortSignal.timeout()` gives: then the `cause`). Counts as transient:
 * retried for idempotent methods (a timed-out signal's call is not), and `isRetryable` says true.
 */
export class TimeoutError extends ChannelError {
  override readonly name = 'TimeoutError';
  override readonly code = 'TIMEOUT' as const;
}
