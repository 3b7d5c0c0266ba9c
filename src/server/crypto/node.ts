import { isUtf8 } from 'node:buffer';
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Crypto } from './crypto.js';

// node:crypto is synchronous, and faster than Web Crypto on Node (npm run bench:webhooks measures both).
export const nodeCrypto: Crypto = {
  hmacHex: async (secret, data) => createHmac('sha256', secret).update(data).digest('hex'),
  verifyHmac: (secret, data, signatureHex) => timingSafeEqual(createHmac('sha256', secret).update(data).digest(), Buffer.from(signatureHex, 'hex')),
  sha256Hex: async (data) => createHash('sha256').update(data).digest('hex'),
  randomHex: (bytes) => randomBytes(bytes).toString('hex'),
  randomId: () => randomUUID(),
  // A validity check (simdutf) and V8's own decoder: faster than a fatal TextDecoder, which on
  // Node 20 also goes through an intermediate UTF-16 buffer twice the body's size.
  utf8(bytes) {
    if (!isUtf8(bytes)) throw new TypeError('the data is not valid UTF-8');
    const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
    return Buffer.from(bytes.buffer, bytes.byteOffset + start, bytes.length - start).toString('utf8');
  },
};
