import { fromHex, toHex, type Crypto, type Secret } from './crypto.js';

const encoder = new TextEncoder();
const bytesOf = (data: string | Uint8Array): Uint8Array<ArrayBuffer> => (typeof data === 'string' ? encoder.encode(data) : data) as Uint8Array<ArrayBuffer>;

// Importing a key costs more than verifying a small body: keep the few secrets in use.
const keys = new Map<string, Promise<CryptoKey>>();
function keyFor(secret: Secret): Promise<CryptoKey> {
  const id = typeof secret === 'string' ? 's' + secret : 'b' + toHex(secret);
  let key = keys.get(id);
  if (!key) {
    if (keys.size >= 16) keys.delete(keys.keys().next().value as string);
    key = crypto.subtle.importKey('raw', bytesOf(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    keys.set(id, key);
  }
  return key;
}

/** Web Crypto only: Deno, Bun, Cloudflare Workers, Vercel Edge, browsers. */
export const webCrypto: Crypto = {
  hmacHex: async (secret, data) => toHex(await crypto.subtle.sign('HMAC', await keyFor(secret), bytesOf(data))),
  // subtle.verify compares in constant time.
  verifyHmac: async (secret, data, signatureHex) =>
    crypto.subtle.verify('HMAC', await keyFor(secret), fromHex(signatureHex) as Uint8Array<ArrayBuffer>, bytesOf(data)),
  sha256Hex: async (data) => toHex(await crypto.subtle.digest('SHA-256', bytesOf(data))),
  randomHex: (bytes) => toHex(crypto.getRandomValues(new Uint8Array(bytes))),
  randomId: () => crypto.randomUUID(),
  utf8: (bytes) => decoder.decode(bytes),
};

const decoder = new TextDecoder('utf-8', { fatal: true });
