import { describe, expect, test } from 'vitest';
import { redactSecrets } from '../../../src/testing/check/secret-forms.js';

describe('redactSecrets', () => {
  const secret = 'sess-9d8c7b6a5f4e';
  test.each([
    ['as it is', (s: string) => `no session for ${s}.`],
    ['URL-encoded', (s: string) => encodeURIComponent(`a b&${s}`)],
    ['JSON-escaped', (s: string) => JSON.stringify({ got: s + '"' })],
    ['hex', (s: string) => Buffer.from('x' + s).toString('hex')],
    ['HEX', (s: string) => Buffer.from(s).toString('hex').toUpperCase()],
    ['base64 at offset 0', (s: string) => Buffer.from(s + 'tail').toString('base64')],
    ['base64 at offset 1', (s: string) => Buffer.from('a' + s).toString('base64')],
    ['base64 at offset 2', (s: string) => Buffer.from('ab' + s + '!').toString('base64')],
    ['base64url at offset 2', (s: string) => Buffer.from('ab?' + s + '??').toString('base64url')],
  ])('%s: no 6 characters in a row of the encoded secret are left', (_form, echo) => {
    const text = echo(secret);
    const out = redactSecrets(text, [secret]);
    expect(out).toContain('[secret]');
    // What is left beside the mask is only what the neighbouring bytes decide (at most 3 characters a side).
    const encodedOnly = echo(secret).replace(echo(''), '');
    const windows = Array.from({ length: Math.max(0, encodedOnly.length - 9) }, (_, i) => encodedOnly.slice(i + 3, i + 9));
    expect(windows.filter((w) => !echo('').includes(w) && out.includes(w))).toEqual([]);
  });

  test('short values (under 4 characters) and unrelated text are left alone; a mask is not masked again', () => {
    expect(redactSecrets('lang en, HTTP 500', ['en'])).toBe('lang en, HTTP 500');
    expect(redactSecrets('cookie=secret', ['secret', 'cret'])).toBe('cookie=[secret]');
  });
});
