import { isSignatureHex, type Crypto } from '../crypto/crypto.js';

/** What a `sign` function gets for the token request. */
export interface SignInput {
  method: string;
  /** Full request URL. */
  url: string;
  /** Path of the URL (with any query), e.g. `/open/api/v1/sdk/tokens`. */
  path: string;
  /** The exact JSON body that will be sent. */
  body: string;
  accessKey: string;
  secretKey: string;
}

/**
 * Produces the four `X-Channel-*` headers. The service does not publish its string-to-sign,
 * so a partner whose console documents a scheme passes their own function.
 */
export type SignFunction = (input: SignInput) => Promise<Record<string, string>> | Record<string, string>;

/** Seconds a reference-signed request stays acceptable either side of the receiver's clock. */
export const REFERENCE_WINDOW_SECONDS = 300;

/** The reference string-to-sign (see README "Reference signing scheme"). */
export function referenceStringToSign(method: string, path: string, accessKey: string, timestamp: string, nonce: string, bodySha256Hex: string): string {
  return [method.toUpperCase(), path, accessKey, timestamp, nonce, bodySha256Hex].join('\n');
}

/**
 * The reference scheme shared with the sandbox: HMAC-SHA256 (secret key, UTF-8) over
 * `METHOD\nPATH\nACCESS_KEY\nTIMESTAMP\nNONCE\nhex(SHA-256(body))`, lower-case hex;
 * timestamp in whole Unix seconds (of `nowMs`); nonce 32 lower-case hex characters.
 */
export async function signReference(crypto: Crypto, input: SignInput, nowMs = Date.now()): Promise<Record<string, string>> {
  const timestamp = String(Math.floor(nowMs / 1000));
  const nonce = crypto.randomHex(16);
  const text = referenceStringToSign(input.method, input.path, input.accessKey, timestamp, nonce, await crypto.sha256Hex(input.body));
  return {
    'X-Channel-Key': input.accessKey,
    'X-Channel-Timestamp': timestamp,
    'X-Channel-Nonce': nonce,
    'X-Channel-Signature': await crypto.hmacHex(input.secretKey, text),
  };
}

/**
 * Checks a reference-signed request (used by the sandbox). Resolves to `undefined` when
 * valid, else to the reason. Nonce replay is the caller's to track.
 */
export async function verifyReferenceSignature(
  crypto: Crypto,
  input: {
    method: string;
    path: string;
    body: string | Uint8Array;
    headers: { key?: string; timestamp?: string; nonce?: string; signature?: string };
    secretKeyFor: (accessKey: string) => string | undefined;
    nowMs?: number;
  },
): Promise<string | undefined> {
  const { key, timestamp, nonce, signature } = input.headers;
  if (!key || !timestamp || !nonce || !signature) return 'missing X-Channel-Key, -Timestamp, -Nonce or -Signature header';
  const secret = input.secretKeyFor(key);
  if (!secret) return 'unknown access key';
  if (!/^\d{1,12}$/.test(timestamp)) return 'X-Channel-Timestamp must be Unix seconds';
  // Whole seconds on both sides, so the window is the same either way: ±300 pass, ±301 fail.
  if (Math.abs(Math.floor((input.nowMs ?? Date.now()) / 1000) - Number(timestamp)) > REFERENCE_WINDOW_SECONDS) return 'timestamp outside the ±300 s window';
  if (!/^[0-9a-f]{32}$/.test(nonce)) return 'X-Channel-Nonce must be 32 lower-case hex characters';
  if (!isSignatureHex(signature)) return 'X-Channel-Signature must be 64 hex characters';
  const text = referenceStringToSign(input.method, input.path, key, timestamp, nonce, await crypto.sha256Hex(input.body));
  // The crypto's own check compares in constant time.
  return (await crypto.verifyHmac(secret, text, signature)) ? undefined : 'signature mismatch';
}
