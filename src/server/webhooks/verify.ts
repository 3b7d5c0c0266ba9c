import { ConfigError } from '../../errors/ConfigError.js';
import { WebhookSignatureError } from '../../errors/WebhookSignatureError.js';
import { isSignatureHex, type Crypto, type Secret } from '../crypto/crypto.js';

/** The header the service signs pushes in. */
export const SIGNATURE_HEADER = 'x-channel-webhook-signature';

/** A raw body exactly as received: bytes, or text that was never re-serialised. */
export type RawBody = string | Uint8Array | ArrayBuffer;

const bytes = (body: RawBody): string | Uint8Array => (body instanceof ArrayBuffer ? new Uint8Array(body) : body);

const no = Promise.resolve(false);
const yes = Promise.resolve(true);

function isRawBody(value: unknown): value is RawBody {
  return typeof value === 'string' || value instanceof Uint8Array || value instanceof ArrayBuffer;
}

/** A usable secret: a non-empty string or non-empty bytes. */
export function isSecret(value: unknown): value is Secret {
  return (typeof value === 'string' && value !== '') || (value instanceof Uint8Array && value.length > 0);
}

/**
 * The signature check itself (what `verifyWebhookSignature` and the webhook handler run): true
 * when `signature` is the hex HMAC-SHA256 of `rawBody` under `secret`. Never throws; any
 * malformed input is false. Synchronous where the crypto is (node:crypto): the handler then
 * awaits nothing on a push's hot path.
 */
export function checkSignature(crypto: Crypto, rawBody: RawBody, signature: string | null | undefined, secret: Secret): boolean | Promise<boolean> {
  if (!isSignatureHex(signature) || !isSecret(secret) || !isRawBody(rawBody)) return false;
  let result: boolean | Promise<boolean>;
  try {
    result = crypto.verifyHmac(secret, bytes(rawBody), signature);
  } catch {
    return false;
  }
  return typeof result === 'boolean' ? result : result.then(undefined, () => false);
}

/** {@link checkSignature} as a promise (the public `verifyWebhookSignature`). */
export function verifySignature(crypto: Crypto, rawBody: RawBody, signature: string | null | undefined, secret: Secret): Promise<boolean> {
  const result = checkSignature(crypto, rawBody, signature, secret);
  return typeof result === 'boolean' ? (result ? yes : no) : result;
}

/** Lower-case hex HMAC-SHA256 of the body (what `signWebhookBody` runs). */
export async function signBody(crypto: Crypto, rawBody: RawBody, secret: Secret): Promise<string> {
  if (!isSecret(secret)) throw new ConfigError('signWebhookBody needs a non-empty secret');
  return crypto.hmacHex(secret, bytes(rawBody));
}

/** The hex SHA-256 of the raw body (what `dedupKey` runs). */
export function bodyKey(crypto: Crypto, rawBody: RawBody): Promise<string> {
  return crypto.sha256Hex(bytes(rawBody));
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
