import { ChannelError } from './ChannelError.js';

/** One attempt took longer than `timeout` ms. Counts as transient: retried for idempotent methods. */
export class TimeoutError extends ChannelError {
  override readonly name = 'TimeoutError';
  override readonly code = 'TIMEOUT' as const;
}
