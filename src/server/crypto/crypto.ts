/** A secret as text (UTF-8 encoded) or raw bytes. */
export type Secret = string | Uint8Array;

/** The few primitives the server helpers need; one implementation per runtime. */
export interface Crypto {
  /** Lower-case hex HMAC-SHA256. */
  hmacHex(secret: Secret, data: string | Uint8Array): Promise<string>;
  /**
   * Constant-time check of an HMAC-SHA256 against `data`. `signatureHex` has already passed
   * {@link isSignatureHex}. Synchronous where the runtime allows (it is the hot path).
   */
  verifyHmac(secret: Secret, data: string | Uint8Array, signatureHex: string): boolean | Promise<boolean>;
  /** Lower-case hex SHA-256. */
  sha256Hex(data: string | Uint8Array): Promise<string>;
  /** `bytes` random bytes as lower-case hex. */
  randomHex(bytes: number): string;
  /** A random UUID: the id of a lease, a lock's owner, an inbox worker. */
  randomId(): string;
  /** UTF-8 text of `bytes`, without a leading BOM; throws on invalid UTF-8. (Decoding is on the push's hot path too.) */
  utf8(bytes: Uint8Array): string;
}

const hex64 = /^[0-9a-f]{64}$/i;

/** 64 hex characters, either case. Checked before decoding: hex decoders stop silently at the first bad character. */
export function isSignatureHex(value: unknown): value is string {
  return typeof value === 'string' && hex64.test(value);
}

/** The bytes of a hex string already checked by {@link isSignatureHex}. */
export function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = '';
  for (let i = 0; i < view.length; i++) out += (view[i] < 16 ? '0' : '') + view[i].toString(16);
  return out;
}
