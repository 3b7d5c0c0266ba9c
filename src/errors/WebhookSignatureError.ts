import { ChannelError } from './ChannelError.js';

/** A webhook's `X-Channel-Webhook-Signature` is missing, malformed or does not match the body. */
export class WebhookSignatureError extends ChannelError {
  override readonly name = 'WebhookSignatureError';
  override readonly code = 'WEBHOOK_SIGNATURE_ERROR' as const;
}
