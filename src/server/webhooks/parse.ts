import { WebhookPayloadError } from '../../errors/WebhookPayloadError.js';
import {
  describeIssues,
  isLogisticsUpdatedBody,
  isWebhookEnvelope,
  logisticsUpdatedSchema,
  webhookEnvelopeSchema,
  type Logistics,
  type LogisticsUpdatedEvent,
  type WebhookEvent,
} from '../../schemas/logistics.js';
import { isSignatureHex, type Crypto } from '../crypto/crypto.js';
import { getHeader, type HeadersLike } from '../http/headers.js';
import { isSecrets, secretListProblem, SIGNATURE_HEADER, signatureMismatch, signatureMissing, verifySignature, type RawBody, type Secrets } from './verify.js';
import { fail } from '../../shared/check.js';

/** Verifies, then parses and validates a push (what `parseWebhook` runs). */
export async function parseWith(crypto: Crypto, input: ParseWebhookInput): Promise<WebhookEvent> {
  const { body, secret, allowUnsigned = false } = input;
  const signature = input.signature !== undefined ? input.signature : getHeader(input.headers, SIGNATURE_HEADER);
  if (isSecrets(secret)) {
    if (!isSignatureHex(signature)) throw signatureMissing(signature);
    if (!(await verifySignature(crypto, body, signature, secret))) throw signatureMismatch();
  } else if (Array.isArray(secret)) {
    fail(secretListProblem(secret, 'parseWebhook'));
  } else if (!allowUnsigned) {
    fail('the webhook secret is empty; pass the secret from the integration configuration, or allowUnsigned: true if the configuration has none');
  }
  return parsePayload(body, crypto.utf8);
}

/** What `parseWebhook` takes. */
export interface ParseWebhookInput {
  /** The raw body exactly as received. */
  body: RawBody;
  /** The `X-Channel-Webhook-Signature` value; taken from `headers` when omitted. */
  signature?: string | null;
  /** Request headers (Fetch `Headers`, Node `IncomingHttpHeaders` or a plain object); looked up case-insensitively. */
  headers?: HeadersLike;
  /**
   * The webhook signing secret from the integration configuration; while rotating it, a list
   * (`[current, previous]`): a push signed with any of them is accepted.
   */
  secret: Secrets;
  /** Accept pushes without a signature when the secret is empty (the service then sends none). @default false */
  allowUnsigned?: boolean;
}

/** JSON, then shape. Unknown fields are kept; an unknown event type is returned as it is. */
export function parsePayload(body: RawBody, utf8: (bytes: Uint8Array) => string): WebhookEvent {
  let value: unknown;
  try {
    value = JSON.parse(typeof body === 'string' ? body : utf8(body instanceof Uint8Array ? body : new Uint8Array(body)));
  } catch (error) {
    throw new WebhookPayloadError('the push body is not UTF-8 JSON', { cause: error });
  }
  // Checked in place; zod runs only to explain a body that fails.
  if (isWebhookEnvelope(value) && (value.event !== 'logistics.updated' || isLogisticsUpdatedBody(value))) return value as WebhookEvent;
  const envelope = webhookEnvelopeSchema.safeParse(value);
  if (!envelope.success) throw invalid(envelope.error.issues);
  const parsed = logisticsUpdatedSchema.safeParse(value);
  if (!parsed.success) throw invalid(parsed.error.issues);
  return parsed.data;
}

function invalid(issues: Parameters<typeof describeIssues>[0]): WebhookPayloadError {
  const list = describeIssues(issues);
  return new WebhookPayloadError('the push body does not have the expected shape: ' + list.join('; '), { issues: list });
}

/** True for a `logistics.updated` event. */
export function isLogisticsUpdated(event: WebhookEvent): event is LogisticsUpdatedEvent {
  return event.event === 'logistics.updated';
}

/**
 * The latest moment a snapshot knows of, in epoch ms: the newest `events[].time` or
 * `shipped_at` over all shipments; undefined when it has none.
 */
export function latestEventTime(logistics: Logistics): number | undefined {
  let latest: number | undefined;
  for (const shipment of logistics.shipments) {
    const times = [shipment.shipped_at, ...(shipment.events || []).map((e) => e.time)];
    for (const time of times) {
      const t = time === undefined ? NaN : Date.parse(time);
      if (!isNaN(t) && (latest === undefined || t > latest)) latest = t;
    }
  }
  return latest;
}

/**
 * Which of two snapshots of the same order is newer, by {@link latestEventTime}:
 * `1` when `a` is newer, `-1` when `b` is, `0` when neither can be told apart.
 * Pushes may repeat or arrive out of order: upsert by `order_no`, keeping the newer.
 * @example
 * if (!stored || compareLogistics(incoming, stored) >= 0) await save(incoming);
 */
export function compareLogistics(a: Logistics, b: Logistics): -1 | 0 | 1 {
  const ta = latestEventTime(a);
  const tb = latestEventTime(b);
  if (ta === tb) return 0;
  if (tb === undefined) return 1;
  if (ta === undefined) return -1;
  return ta > tb ? 1 : -1;
}
