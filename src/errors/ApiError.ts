import { ChannelError, type ErrorContext } from './ChannelError.js';

/** The service answered with an envelope whose `code` is not 0. */
export class ApiError extends ChannelError {
  override readonly name = 'ApiError';
  override readonly code = 'API_ERROR' as const;
  /** The envelope's `code`. Its values are not published by the service. */
  readonly apiCode: number | string;
  /** HTTP status of the response (often 200). */
  readonly status: number;
  /** The parsed envelope as received. */
  readonly body: unknown;

  constructor(message: string, context: ErrorContext & { status: number; apiCode: number | string; body: unknown }) {
    super(message, context);
    this.apiCode = context.apiCode;
    this.status = context.status;
    this.body = context.body;
  }
}
