import { ChannelError, type ErrorContext } from './ChannelError.js';

/** A verified webhook body that is not JSON or not the shape the interface describes. */
export class WebhookPayloadError extends ChannelError {
  override readonly name = 'WebhookPayloadError';
  override readonly code = 'WEBHOOK_PAYLOAD_ERROR' as const;
  /** Each problem as `path: what was wrong`. */
  readonly issues: string[];

  constructor(message: string, context: ErrorContext & { issues?: string[] } = {}) {
    super(message, context);
    this.issues = context.issues || [];
  }
}
