import { ChannelError } from './ChannelError.js';

/** The service answered 401 again after the forced refresh and the single retry. `auth:failed` is emitted with it. */
export class UnauthorizedError extends ChannelError {
  override readonly name = 'UnauthorizedError';
  override readonly code = 'UNAUTHORIZED' as const;
  /** Always 401. */
  readonly status = 401;
}
