import { ChannelError, type ErrorContext } from './ChannelError.js';

/** A non-2xx response that is not a service envelope with a non-zero `code` (and not the 401 handled by refresh). */
export class HttpError extends ChannelError {
  override readonly name = 'HttpError';
  override readonly code = 'HTTP_ERROR' as const;
  /** HTTP status code. */
  readonly status: number;
  /** The response body, at most 1,000 characters. */
  readonly body: string;

  constructor(message: string, context: ErrorContext & { status: number; body: string }) {
    super(message, context);
    this.status = context.status;
    this.body = context.body;
  }
}
