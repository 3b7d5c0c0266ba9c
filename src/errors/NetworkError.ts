import { ChannelError } from './ChannelError.js';

/** No HTTP response: connection refused or reset, DNS failure, offline, CORS. Retried for idempotent methods. */
export class NetworkError extends ChannelError {
  override readonly name = 'NetworkError';
  override readonly code = 'NETWORK_ERROR' as const;
}
