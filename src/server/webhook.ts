import { ConfigError } from '../errors/ConfigError.js';
import { WebhookPayloadError } from '../errors/WebhookPayloadError.js';
import { WebhookSignatureError } from '../errors/WebhookSignatureError.js';
import {
  describeIssues,
  isLogisticsUpdatedBody,
  isWebhookEnvelope,
  logisticsUpdatedSchema,
  webhookEnvelopeSchema,
  type Logistics,
  type LogisticsUpdatedEvent,
  type WebhookEvent,
} from '../schemas/logistics.js';
import { isSignatureHex, type Crypto, type Secret } from './crypto.js';
import { getHeader, type HeadersLike } from './headers.js';

/** The header the service signs pushes in. */
export const SIGNATURE_HEADER = 'x-channel-webhook-signature';

/** A raw body exactly as received: bytes, or text that was never re-serialised. */
export type RawBody = string | Uint8Array | ArrayBuffer;

const bytes = (body: RawBody): string | Uint8Array => (body instanceof ArrayBuffer ? new Uint8Array(body) : body);

const no = Promise.resolve(false);

function isRawBody(value: unknown): value is RawBody {
  return typeof value === 'string' || value instanceof Uint8Array || value instanceof ArrayBuffer;
}

/** A usable secret: a non-empty string or non-empty bytes. */
export function isSecret(value: unknown): value is Secret {
  return (typeof value === 'string' && value !== '') || (value instanceof Uint8Array && value.length > 0);
}

export function createWebhookTools(crypto: Crypto) {
  // Documented where it is exported: src/server.ts.
  function verifyWebhookSignature(rawBody: RawBody, signature: string | null | undefined, secret: Secret): Promise<boolean> {
    if (!isSignatureHex(signature) || !isSecret(secret) || !isRawBody(rawBody)) return no;
    let result: boolean | Promise<boolean>;
    try {
      result = crypto.verifyHmac(secret, bytes(rawBody), signature);
    } catch {
      return no;
    }
    // One promise on the node:crypto path: this runs once per push and is benchmarked.
    return typeof result === 'boolean' ? Promise.resolve(result) : result.then(undefined, () => false);
  }

  // Documented where it is exported: src/server.ts.
  async function signWebhookBody(rawBody: RawBody, secret: Secret): Promise<string> {
    if (!isSecret(secret)) throw new ConfigError('signWebhookBody needs a non-empty secret');
    return crypto.hmacHex(secret, bytes(rawBody));
  }

  // Documented where it is exported: src/server.ts.
  function dedupKey(rawBody: RawBody): Promise<string> {
    return crypto.sha256Hex(bytes(rawBody));
  }

  // Documented where it is exported: src/server.ts.
  async function parseWebhook(input: ParseWebhookInput): Promise<WebhookEvent> {
    const { body, secret, allowUnsigned = false } = input;
    const signature = input.signature !== undefined ? input.signature : getHeader(input.headers, SIGNATURE_HEADER);
    if (isSecret(secret)) {
      if (!isSignatureHex(signature)) throw signatureMissing(signature);
      if (!(await verifyWebhookSignature(body, signature, secret))) throw signatureMismatch();
    } else if (!allowUnsigned) {
      throw new ConfigError('the webhook secret is empty; pass the secret from the integration configuration, or allowUnsigned: true if the configuration has none');
    }
    return parsePayload(body, crypto.utf8);
  }

  return { verifyWebhookSignature, signWebhookBody, dedupKey, parseWebhook };
}

/** Why a signature header is refused before any hashing: missing, or not 64 hex characters. */
export function signatureMissing(signature: string | null | undefined): WebhookSignatureError {
  return new WebhookSignatureError(
    signature === undefined || signature === null || signature === ''
      ? 'the push has no ' + SIGNATURE_HEADER + ' header, but a webhook secret is configured; refusing it'
      : 'the ' + SIGNATURE_HEADER + ' header is not 64 hex characters; refusing the push',
  );
}

export function signatureMismatch(): WebhookSignatureError {
  return new WebhookSignatureError(
    'the ' + SIGNATURE_HEADER + ' header does not match the body: check the webhook secret, and verify the raw body as received (not re-serialised JSON)',
  );
}

/** What `parseWebhook` takes. */
export interface ParseWebhookInput {
  /** The raw body exactly as received. */
  body: RawBody;
  /** The `X-Channel-Webhook-Signature` value; taken from `headers` when omitted. */
  signature?: string | null;
  /** Request headers (Fetch `Headers`, Node `IncomingHttpHeaders` or a plain object); looked up case-insensitively. */
  headers?: HeadersLike;
  /** The webhook signing secret from the integration configuration. */
  secret: Secret;
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
