import { ChannelError } from './ChannelError.js';

/** `tokenProvider` threw, timed out (`tokenTimeout`), or returned something other than a JWT string. The next request asks the provider again. */
export class TokenProviderError extends ChannelError {
  override readonly name = 'TokenProviderError';
  override readonly code = 'TOKEN_PROVIDER_ERROR' as const;
}
