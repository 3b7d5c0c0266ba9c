import { ChannelError, type ErrorContext } from './ChannelError.js';

/** The service's token endpoint failed. Carries what is known; never the secret key or a token. */
export class TokenExchangeError extends ChannelError {
  override readonly name = 'TokenExchangeError';
  override readonly code = 'TOKEN_EXCHANGE_ERROR' as const;
  /** HTTP status, when a response arrived. */
  readonly status?: number;
  /** The envelope's `code`, when the service answered with one. */
  readonly apiCode?: number | string;

  constructor(message: string, context: ErrorContext & { status?: number; apiCode?: number | string } = {}) {
    super(message, context);
    if (context.status !== undefined) this.status = context.status;
    if (context.apiCode !== undefined) this.apiCode = context.apiCode;
  }
}
