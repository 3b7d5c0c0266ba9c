import { describeValue, fail } from '../../shared/check.js';
import { WebhookSignatureError } from '../../errors/WebhookSignatureError.js';
import { isSignatureHex, type Crypto, type Secret } from '../crypto/crypto.js';

import { SIGNATURE_HEADER } from './signature-header.js';

export { SIGNATURE_HEADER };

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
 * The webhook signing secret, or several while one is rotated (`[current, previous]`): a push
 * signed with any of them is accepted.
 */
export type Secrets = Secret | readonly Secret[];

/** A usable secret, or a non-empty list of usable secrets. */
export function isSecrets(value: unknown): value is Secrets {
  return isSecret(value) || (Array.isArray(value) && value.length > 0 && value.every(isSecret));
}

/** What is wrong with a list of secrets that {@link isSecrets} refused, for a ConfigError. */
export function secretListProblem(list: readonly unknown[], what: string): string {
  if (list.length === 0) return what + ': secret is an empty list; pass the webhook secret, or [current, previous] while rotating it';
  const index = list.findIndex((one) => !isSecret(one));
  return (
    what +
    ': secret[' +
    index +
    '] is ' +
    (list[index] === '' ? 'empty' : 'not a string or bytes (' + describeValue(list[index]) + ')') +
    '; every secret in the list must be a non-empty string or Uint8Array ([current, previous] while rotating)'
  );
}

/**
 * The signature check itself (what `verifyWebhookSignature` and the webhook handler run): true
 * when `signature` is the hex HMAC-SHA256 of `rawBody` under `secret`, or under one of a list of
 * secrets. Never throws; any malformed input is false. Synchronous where the crypto is
 * (node:crypto): the handler then awaits nothing on a push's hot path.
 */
export function checkSignature(crypto: Crypto, rawBody: RawBody, signature: string | null | undefined, secret: Secrets): boolean | Promise<boolean> {
  if (!isSignatureHex(signature) || !isSecrets(secret) || !isRawBody(rawBody)) return false;
  const data = bytes(rawBody);
  let pending: Array<Promise<boolean>> | undefined;
  for (const one of isSecret(secret) ? [secret] : secret) {
    let result: boolean | Promise<boolean>;
    try {
      result = crypto.verifyHmac(one, data, signature);
    } catch {
      continue;
    }
    if (result === true) return true;
    if (result !== false) (pending ||= []).push(result.then(undefined, () => false));
  }
  return pending ? Promise.all(pending).then((results) => results.includes(true)) : false;
}

/** {@link checkSignature} as a promise (the public `verifyWebhookSignature`). */
export function verifySignature(crypto: Crypto, rawBody: RawBody, signature: string | null | undefined, secret: Secrets): Promise<boolean> {
  const result = checkSignature(crypto, rawBody, signature, secret);
  return typeof result === 'boolean' ? (result ? yes : no) : result;
}

/** Lower-case hex HMAC-SHA256 of the body (what `signWebhookBody` runs). */
export async function signBody(crypto: Crypto, rawBody: RawBody, secret: Secret): Promise<string> {
  if (!isSecret(secret)) fail('signWebhookBody needs a non-empty secret');
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
