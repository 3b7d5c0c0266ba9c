// What the checks never print: the credentials they sent and the secrets they were given, in the
// forms an answer can echo them (as sent, URL-encoded, JSON-escaped, hex, base64 at any offset),
// masked before an answer is cut to length (a cut must not leave the start of a secret behind).

/** Shorter values are not masked (a `lang=en` cookie is no secret, and masking it would garble text). */
const MIN_SECRET = 4;
const MASK = '[secret]';

/** Header values and the parts of them an app would echo: cookie values, a Bearer token. */
export function secretPieces(values: Iterable<string>): string[] {
  return [...values].flatMap((value) => [value, ...value.split(/[;,]/).map((piece) => piece.trim().replace(/^[^=\s]+=|^bearer\s+/i, ''))]);
}

/** Headers the checks set themselves, whose values are not secret (everything else sent is a credential). */
const PUBLIC_HEADERS = /^(accept|content-type|origin|sec-fetch-[\w-]+|access-control-request-[\w-]+|x-channel-[\w-]+)$/i;

/** The credentials among request headers: every value but those of {@link PUBLIC_HEADERS}. */
export function credentialsIn(headers: Record<string, string> | undefined): string[] {
  return secretPieces(
    Object.entries(headers ?? {})
      .filter(([name]) => !PUBLIC_HEADERS.test(name))
      .map(([, value]) => value),
  );
}

/**
 * The forms `secret` can come back in: as it is, URL-encoded (`%20` or `+`), JSON-escaped, hex in
 * either case, and the part of its base64 (standard and URL-safe) that depends on the secret alone,
 * at each of the three offsets it can sit at inside a longer encoded text.
 */
export function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = [
    secret,
    encodeURIComponent(secret),
    encodeURIComponent(secret).replace(/%20/g, '+'),
    JSON.stringify(secret).slice(1, -1),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
  ];
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    // The leading characters mix the offset's bytes in, a trailing partial group the bytes after it.
    const core = encoded.slice([0, 2, 3][offset], (offset + bytes.length) % 3 ? -1 : undefined);
    forms.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms;
}

/** `text` with every form of every secret (of {@link MIN_SECRET} characters or more) replaced by `[secret]`. */
export function redactSecrets(text: string, secrets: Iterable<string>): string {
  const forms = [...new Set([...secrets].filter((s) => s.length >= MIN_SECRET).flatMap(secretForms))]
    .filter((form) => form.length >= MIN_SECRET)
    .toSorted((a, b) => b.length - a.length);
  // A mark no form holds while replacing: a later, shorter form must not match inside an earlier mask.
  const masked = forms.reduce((out, form) => (out.includes(form) ? out.split(form).join('\0') : out), text);
  return masked.split('\0').join(MASK);
}
