import { describe, expect, test } from 'vitest';
import { redactSecrets, secretPieces } from '../../../src/testing/check/secret-forms.js';

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

describe('redactSecrets: the forms other stacks echo a secret in', () => {
  // A session id with the characters encoders treat differently, and a webhook secret beyond ASCII.
  const secret = "s3ss/9d+8c7b=6a!5f'(4e)~";
  const unicode = 'whsec_clé-€-秘密';
  test.each([
    ['percent-encoded in lower case (%2f)', (s: string) => encodeURIComponent(s).replace(/%[\dA-F]{2}/g, (p) => p.toLowerCase())],
    ["form-encoded (URLSearchParams, Python's quote: !'()~ encoded too)", (s: string) => new URLSearchParams({ got: s }).toString()],
    ["JSON with PHP's escaped slashes (\\/)", (s: string) => JSON.stringify({ got: s }).replace(/\//g, '\\/')],
    ['HTML-escaped (an error page)', (s: string) => `<p>no session for ${s.replace(/&/g, '&amp;').replace(/'/g, '&#39;').replace(/\//g, '&#x2F;')}</p>`],
    [
      "JSON with PHP's \\/ and Python's \\u at once",
      (s: string) =>
        JSON.stringify({ got: s + 'é' })
          .replace(/\//g, '\\/')
          .replace(/é/g, '\\u00e9'),
    ],
  ])('%s', (_form, echo) => {
    const out = redactSecrets(echo(secret), [secret]);
    expect(out).toContain('[secret]');
    for (const piece of ['s3ss', '9d', '8c7b', '6a', '5f', '4e']) expect(out).not.toContain(piece);
  });

  test.each([
    [
      "JSON with non-ASCII as \\u escapes (Python's json.dumps)",
      (s: string) => JSON.stringify({ got: s }).replace(/[^\x20-\x7e]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')),
    ],
    ['percent-encoded UTF-8 in lower case', (s: string) => encodeURIComponent(s).toLowerCase()],
    ['decomposed (NFD: e and a combining accent)', (s: string) => s.normalize('NFD')],
  ])('a secret beyond ASCII: %s', (_form, echo) => {
    const out = redactSecrets(`refused: ${echo(unicode)}.`, [unicode]);
    expect(out).toMatch(/^refused: ("\{"got":")?\{?.*\[secret\]/);
    expect(out).not.toMatch(/whsec|cl|%e7|\\u79d8/i);
  });

  test("a cookie's short parts (remember=true) are not masked on their own: a fix that says 'true' stays readable", () => {
    const secrets = secretPieces(['session=sess-9d8c7b6a5f4e; remember=true; theme=dark']);
    expect(redactSecrets('run timedatectl set-ntp true; dark mode; no session for sess-9d8c7b6a5f4e', secrets)).toBe(
      'run timedatectl set-ntp true; dark mode; no session for [secret]',
    );
  });
});

test('many long secrets (every token a token route answered) mask in milliseconds, without a pattern too large to build', () => {
  const tokens = Array.from(
    { length: 40 },
    (_, i) => 'eyJhbGciOiJIUzI1NiJ9.' + Buffer.from(`{"sub":"u","jti":"${i}${'x'.repeat(300)}"}`).toString('base64url') + '.' + 'S'.repeat(43),
  );
  const text = `HTTP 200 ${tokens[7]} and ${encodeURIComponent(tokens[3])} ` + 'x'.repeat(4000);
  // Before (one pattern of every form of every secret): "SyntaxError: Invalid regular expression", after 20 s.
  expect(redactSecrets(text, tokens).startsWith('HTTP 200 [secret] and [secret] x')).toBe(true);
});
