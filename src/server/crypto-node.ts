import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Crypto } from './crypto.js';

// node:crypto is synchronous and, for a 10 KB body, 4-15x faster than Web Crypto on Node.
export const nodeCrypto: Crypto = {
  hmacHex: async (secret, data) => createHmac('sha256', secret).update(data).digest('hex'),
  verifyHmac: (secret, data, signatureHex) => timingSafeEqual(createHmac('sha256', secret).update(data).digest(), Buffer.from(signatureHex, 'hex')),
  sha256Hex: async (data) => createHash('sha256').update(data).digest('hex'),
  randomHex: (bytes) => randomBytes(bytes).toString('hex'),
};
