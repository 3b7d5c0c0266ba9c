import { ChannelError } from './ChannelError.js';

/**
 * The request was cancelled through its `signal` (the signal's `reason` is the `cause`) or
 * fenced by `clearToken()`. The package's own class, not a DOMException. It carries no stack
 * frames: they would only show the abort machinery.
 */
export class AbortError extends ChannelError {
  override readonly name = 'AbortError';
  override readonly code = 'ABORTED' as const;
}
