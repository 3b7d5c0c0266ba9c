import { expect, test } from 'vitest';
import { nodeCrypto } from '../../../src/server/crypto/node.js';
import { webCrypto } from '../../../src/server/crypto/web.js';
import { referenceStringToSign, signReference, verifyReferenceSignature } from '../../../src/server/tokens/signing.js';

const now = Date.UTC(2026, 10, 22, 5, 0, 0);
const input = {
  method: 'POST',
  url: 'https://c.example/open/api/v1/sdk/tokens',
  path: '/open/api/v1/sdk/tokens',
  body: '{"external_user_id":"u1"}',
  accessKey: 'ak',
  secretKey: 'sk',
};

test.each([
  ['node:crypto', nodeCrypto],
  ['Web Crypto', webCrypto],
])('reference scheme (%s): signs, verifies, and refuses what it must', async (_name, crypto) => {
  const headers = await signReference(crypto, input, now);
  expect(headers['X-Channel-Key']).toBe('ak');
  expect(headers['X-Channel-Timestamp']).toBe(String(now / 1000));
  expect(headers['X-Channel-Nonce']).toMatch(/^[0-9a-f]{32}$/);
  expect(headers['X-Channel-Signature']).toMatch(/^[0-9a-f]{64}$/);
  const check = (over: Partial<{ body: string; path: string; nowMs: number; key: string; timestamp: string; nonce: string; signature: string }> = {}) =>
    verifyReferenceSignature(crypto, {
      method: 'POST',
      path: over.path ?? input.path,
      body: over.body ?? input.body,
      nowMs: over.nowMs ?? now,
      secretKeyFor: (key) => (key === 'ak' ? 'sk' : undefined),
      headers: {
        key: over.key ?? headers['X-Channel-Key'],
        timestamp: over.timestamp ?? headers['X-Channel-Timestamp'],
        nonce: over.nonce ?? headers['X-Channel-Nonce'],
        signature: over.signature ?? headers['X-Channel-Signature'],
      },
    });
  expect(await check()).toBeUndefined();
  expect(await check({ signature: headers['X-Channel-Signature'].toUpperCase() })).toBeUndefined();
  expect(await check({ nowMs: now + 299_000 })).toBeUndefined();
  expect(await check({ nowMs: now + 301_000 })).toMatch(/outside the ±300 s window/);
  expect(await check({ nowMs: now - 301_000 })).toMatch(/outside/);
  expect(await check({ body: '{"external_user_id":"u2"}' })).toBe('signature mismatch');
  expect(await check({ path: '/open/api/v1/sdk/tokens?x' })).toBe('signature mismatch');
  expect(await check({ key: 'other' })).toBe('unknown access key');
  expect(await check({ nonce: 'short' })).toMatch(/32 lower-case hex/);
  expect(await check({ timestamp: String(now) })).toMatch(/outside|Unix seconds/);
  expect(await check({ signature: 'zz' })).toMatch(/64 hex/);
  expect(await check({ signature: '' })).toMatch(/missing/);
});

test('the string-to-sign is exactly the documented one', async () => {
  const bodyHash = await nodeCrypto.sha256Hex(input.body);
  expect(referenceStringToSign('post', '/open/api/v1/sdk/tokens', 'ak', '1767225600', '0123456789abcdef0123456789abcdef', bodyHash)).toBe(
    `POST\n/open/api/v1/sdk/tokens\nak\n1767225600\n0123456789abcdef0123456789abcdef\n${bodyHash}`,
  );
});
