// fast-check properties over every implementation: 0 malformed inputs accepted, 0 throws.
import * as fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { implementations } from '../implementations.js';
import { sized } from '../../helpers/tier.js';

const impls = await implementations();
// Full-size in the integration tier (which runs this file again, against dist/ too).
const runs = { numRuns: sized(150, 50) };
// Any code point, lone surrogates included: what `fc.string({ unit: 'binary' })` draws, without the
// table it builds on first use, which costs seconds of CPU and, on a busy machine, the test's timeout.
const anyCodePoint = fc.integer({ min: 0, max: 0x10ffff }).map((code) => String.fromCodePoint(code));

describe.each(impls)('webhook properties: %s', (_name, tools) => {
  test('sign then verify is true, in either hex case', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), fc.string({ minLength: 1 }), fc.boolean(), async (body, secret, upper) => {
        const hex = await tools.signWebhookBody(body, secret);
        return (await tools.verifyWebhookSignature(body, upper ? hex.toUpperCase() : hex, secret)) === true;
      }),
      runs,
    );
  });

  test('any one-byte change of body, signature or secret is false', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 1, maxLength: 1024 }),
        fc.string({ minLength: 1, maxLength: 64 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.constantFrom('body', 'signature', 'secret'),
        async (body, secret, at, flip, what) => {
          const hex = await tools.signWebhookBody(body, secret);
          if (what === 'body') {
            const changed = body.slice();
            changed[at % changed.length] ^= flip;
            return !(await tools.verifyWebhookSignature(changed, hex, secret));
          }
          if (what === 'signature') {
            const i = at % 64;
            const c = hex[i] === '0' ? '1' : '0';
            return !(await tools.verifyWebhookSignature(body, hex.slice(0, i) + c + hex.slice(i + 1), secret));
          }
          const bytes = new TextEncoder().encode(secret);
          bytes[at % bytes.length] ^= flip;
          return !(await tools.verifyWebhookSignature(body, hex, bytes));
        },
      ),
      runs,
    );
  });

  test('arbitrary strings as signature never throw and are never accepted', async () => {
    const body = 'fixed body';
    const secret = 'fixed secret';
    const real = await tools.signWebhookBody(body, secret);
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string(), fc.string({ unit: anyCodePoint }), fc.stringMatching(/^[0-9a-fA-Fg-z ]{60,70}$/), fc.anything()),
        async (signature) => {
          const ok = await tools.verifyWebhookSignature(body, signature as string, secret);
          if (ok && String(signature).toLowerCase() !== real) accepted++;
          return typeof ok === 'boolean';
        },
      ),
      { numRuns: sized(400, 60) },
    );
    expect(accepted).toBe(0);
  });
});
