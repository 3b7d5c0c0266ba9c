// What the checks never print: the credentials they sent and the secrets they were given, in the
// forms an answer can echo them (as sent, URL-encoded, JSON-escaped, hex, base64 at any offset),
// masked before an answer is cut to length (a cut must not leave the start of a secret behind).

/** Shorter values are not masked (a `lang=en` cookie is no secret, and masking it would garble text). */
const MIN_SECRET = 4;
const MASK = '[secret]';

/**
 * Shorter parts of a header value are not masked on their own: a cookie's `remember=true` or
 * `theme=dark` is no secret, and masking `true` would turn a fix such as `timedatectl set-ntp true`
 * into `set-ntp [secret]`. A session id or token is longer; the whole header value is masked anyway.
 */
const MIN_PIECE = 8;

/** Header values and the parts of them an app would echo: cookie values, a Bearer token. */
export function secretPieces(values: Iterable<string>): string[] {
  return [...values].flatMap((value) => [
    value,
    ...value
      .split(/[;,]/)
      .map((piece) => piece.trim().replace(/^[^=\s]+=|^bearer\s+/i, ''))
      .filter((piece) => piece.length >= MIN_PIECE),
  ]);
}

/**
 * The values of a URL's query, of {@link MIN_PIECE} characters or more: a receiver or a preview
 * deployment guarded by one (`?key=…`, `?x-vercel-protection-bypass=…`) has its credential there.
 */
export function urlSecrets(url: string): string[] {
  try {
    return [...new URL(url).searchParams.values()].filter((value) => value.length >= MIN_PIECE);
  } catch {
    return [];
  }
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

/** Percent-encoding of every byte but unreserved ones, as form encoding and Python's quote write it (`!'()*~` too). */
const formEncoded = (text: string) => encodeURIComponent(text).replace(/[!'()*~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
const lowerHex = (text: string) => text.replace(/%[\dA-F]{2}/g, (p) => p.toLowerCase());
const HTML: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '/': '&#x2F;' };

/**
 * The forms `secret` can come back in: as it is; URL-encoded (`%20` or `+`), form-encoded, each
 * with its hex in either case (`%2F`, `%2f`); JSON-escaped, with PHP's `\/` and with non-ASCII as
 * `\u00e9` (Python's json.dumps); HTML-escaped; hex in either case; and the part of its base64
 * (standard and URL-safe) that depends on the secret alone, at each of the three offsets it can sit
 * at inside a longer encoded text. Literal strings: masking stays a split and a join.
 */
export function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const json = JSON.stringify(secret).slice(1, -1);
  const ascii = json.replace(/[^\x20-\x7e]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  const encoded = [encodeURIComponent(secret), formEncoded(secret)].flatMap((e) => [e, e.replace(/%20/g, '+')]);
  const forms = [
    secret,
    ...encoded,
    ...encoded.map(lowerHex),
    json,
    json.replace(/\//g, '\\/'),
    ascii,
    ascii.replace(/\//g, '\\/'),
    ascii.replace(/\\u[\da-f]{4}/g, (u) => u.toUpperCase().replace('\\U', '\\u')),
    secret.replace(/[&<>"'/]/g, (c) => HTML[c]),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
  ];
  for (const offset of [0, 1, 2]) {
    const text = Buffer.concat([Buffer.alloc(offset), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    // The leading characters mix the offset's bytes in, a trailing partial group the bytes after it.
    const core = text.slice([0, 2, 3][offset], (offset + bytes.length) % 3 ? -1 : undefined);
    forms.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms;
}

/** `text` with every form of every secret (of {@link MIN_SECRET} characters or more) replaced by `[secret]`. */
export function redactSecrets(text: string, secrets: Iterable<string>): string {
  // Each in both Unicode normal forms too: an app may answer `é` as one code point or as `e` and an accent.
  const given = [...secrets].filter((s) => s.length >= MIN_SECRET).flatMap((s) => [s, s.normalize('NFC'), s.normalize('NFD')]);
  const forms = [...new Set(given.flatMap(secretForms))].filter((form) => form.length >= MIN_SECRET).toSorted((a, b) => b.length - a.length);
  // A mark no form holds while replacing: a later, shorter form must not match inside an earlier mask.
  const masked = forms.reduce((out, form) => (out.includes(form) ? out.split(form).join('\0') : out), text);
  return masked.split('\0').join(MASK);
}

/**
 * How far into a text the masking must look to mask everything in its first `chars` characters:
 * a secret's longest form (a 3-byte character as `%E7%A7%98`) is 9 characters for each of its own. The rest would be cut anyway, and masking 64 KB costs a quarter of a second.
 */
export function maskReach(chars: number, secrets: Iterable<string>): number {
  return chars + 9 * Math.max(0, ...[...secrets].map((s) => s.length));
}

/** `report` with every secret in its text (URL, details, fixes: a header value a line quotes too), in any form, replaced by `[secret]`. */
export function redactReport<R extends { url: string; checks: Array<{ detail: string; fix?: string }> }>(report: R, secrets: string[]): R {
  const clean = (text: string) => redactSecrets(text, secrets);
  return { ...report, url: clean(report.url), checks: report.checks.map((c) => ({ ...c, detail: clean(c.detail), ...(c.fix ? { fix: clean(c.fix) } : {}) })) };
}
