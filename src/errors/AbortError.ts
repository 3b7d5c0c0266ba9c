import { ChannelError } from './ChannelError.js';

/** The request was cancelled through its `signal`. The signal's `reason` is the `cause`. This is the package's own class, not a DOMException. */
export class AbortError extends ChannelError {
  override readonly name = 'AbortError';
  override readonly code = 'ABORTED' as const;
}
