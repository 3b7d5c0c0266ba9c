import { describe, expect, test } from 'vitest';
import { implementations, PROJECT_BODY, vectors } from '../implementations.js';

const encoder = new TextEncoder();
const impls = await implementations();

test('the project vector body is 335 UTF-8 bytes', () => {
  expect(encoder.encode(PROJECT_BODY).length).toBe(335);
});

describe.each(impls)('webhook vectors: %s', (_name, tools) => {
  test.each(vectors)('$name', async ({ key, body, hex }) => {
    const bytes = encoder.encode(body);
    expect(await tools.signWebhookBody(body, key)).toBe(hex);
    expect(await tools.signWebhookBody(bytes, key)).toBe(hex);
    // Lower and upper case; string, Uint8Array and ArrayBuffer bodies.
    for (const signature of [hex, hex.toUpperCase()]) {
      expect(await tools.verifyWebhookSignature(body, signature, key)).toBe(true);
      expect(await tools.verifyWebhookSignature(bytes, signature, key)).toBe(true);
      expect(await tools.verifyWebhookSignature(bytes.buffer.slice(0), signature, key)).toBe(true);
    }
    const changed = bytes.slice();
    changed[changed.length - 1] ^= 1;
    expect(await tools.verifyWebhookSignature(changed, hex, key)).toBe(false);
    expect(await tools.verifyWebhookSignature(body + '\n', hex, key)).toBe(false);
    expect(await tools.verifyWebhookSignature(body, hex + 'zz', key)).toBe(false); // junk after a valid signature
    expect(await tools.verifyWebhookSignature(body, hex.slice(0, 63), key)).toBe(false);
    expect(await tools.verifyWebhookSignature(body, hex + '0', key)).toBe(false);
    expect(await tools.verifyWebhookSignature(body, 'sha256=' + hex, key)).toBe(false);
    expect(await tools.verifyWebhookSignature(body, ' ' + hex, key)).toBe(false);
  });

  test('malformed input is false, never a throw', async () => {
    const good = vectors[0];
    for (const signature of [undefined, null, '', 'foo', 'g'.repeat(64), '💥'.repeat(32), 42, {}, []] as unknown[]) {
      await expect(tools.verifyWebhookSignature(good.body, signature as string, good.key)).resolves.toBe(false);
    }
    for (const secret of ['', undefined, null, 7, new Uint8Array(0)] as unknown[]) {
      await expect(tools.verifyWebhookSignature(good.body, good.hex, secret as string)).resolves.toBe(false);
    }
    for (const body of [undefined, null, 5, {}, { body: good.body }] as unknown[]) {
      await expect(tools.verifyWebhookSignature(body as string, good.hex, good.key)).resolves.toBe(false);
    }
  });

  test('the empty body is signed and verified like any other', async () => {
    const hex = await tools.signWebhookBody('', 'k');
    expect(hex).toMatch(/^[0-9a-f]{64}$/);
    expect(await tools.verifyWebhookSignature(new Uint8Array(0), hex, 'k')).toBe(true);
  });

  test('re-serialised JSON does not verify: the signature is over the bytes as sent', async () => {
    const hex = vectors.at(-1)!.hex;
    const reserialised = JSON.stringify(JSON.parse(PROJECT_BODY), null, 2);
    const escaped = PROJECT_BODY.replace('快件已发出', '\\u5feb\\u4ef6\\u5df2\\u53d1\\u51fa');
    expect(JSON.parse(escaped)).toEqual(JSON.parse(PROJECT_BODY));
    expect(await tools.verifyWebhookSignature(reserialised, hex, 'test_secret_123')).toBe(false);
    expect(await tools.verifyWebhookSignature(escaped, hex, 'test_secret_123')).toBe(false);
  });

  test('dedupKey is the SHA-256 of the raw bytes', async () => {
    expect(await tools.dedupKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(await tools.dedupKey(encoder.encode('abc'))).toBe(await tools.dedupKey('abc'));
  });
});
