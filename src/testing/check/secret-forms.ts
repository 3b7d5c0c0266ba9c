// What the checks never print: the credentials they sent and the secrets they were given, in the
// forms an answer can echo them (as sent, URL-encoded, JSON-escaped, hex, base64 at any offset),
// masked before an answer is cut to length (a cut must not leave the start of a secret behind).

import type { CheckReport } from './check-report.js';

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

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Hex digits in either case (`%2f` and `%2F`, `\u00e9` and `\u00E9`). */
const anyCase = (hex: string) => hex.replace(/[a-f]/gi, (d) => `[${d.toLowerCase()}${d.toUpperCase()}]`);
/** Where a writer wrapped its text (base64 at 76 characters, a long line folded): a line break, then any indent. */
const BREAK = '(?:\\r?\\n[ \\t]*)?';
const NAMED: Record<string, string> = { '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": '(?:apos|#39)' };

/**
 * A pattern for the ways one character comes back: as it is, percent-encoded in either case (each
 * UTF-8 byte, whether or not encodeURIComponent would encode it: form encoding and Python's quote do
 * `!'()~`), `+` for a space, JSON-escaped (`\"`, PHP's `\/`, `\u00e9` as Python writes non-ASCII),
 * or an HTML entity.
 */
function charPattern(c: string): string {
  const code = c.codePointAt(0) ?? 0;
  const units = Array.from({ length: c.length }, (_, i) => '\\\\u' + anyCase(c.charCodeAt(i).toString(16).padStart(4, '0')));
  const forms = [
    escape(c),
    [...Buffer.from(c, 'utf8')].map((b) => '%' + anyCase(b.toString(16).padStart(2, '0'))).join(''),
    units.join(''),
    `&#0*${code};`,
    `&#[xX]0*${anyCase(code.toString(16))};`,
  ];
  const json = JSON.stringify(c).slice(1, -1);
  if (json !== c) forms.push(escape(json));
  if (c === '/') forms.push('\\\\/');
  if (c === ' ') forms.push('\\+');
  if (NAMED[c]) forms.push(`&${NAMED[c]};`);
  return `(?:${forms.join('|')})`;
}

/**
 * A pattern for the forms `secret` can come back in: each character as {@link charPattern} allows,
 * hex in either case, and the part of its base64 (standard and URL-safe) that depends on the secret
 * alone, at each of the three offsets it can sit at inside a longer encoded text; any of them
 * wrapped onto the next line anywhere.
 */
export function secretPattern(secret: string): string {
  const bytes = Buffer.from(secret, 'utf8');
  const spelled = (form: string) => [...form].map(escape).join(BREAK);
  const forms = [[...secret].map(charPattern).join(BREAK), [...bytes.toString('hex')].map(anyCase).join(BREAK)];
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    // The leading characters mix the offset's bytes in, a trailing partial group the bytes after it.
    const core = encoded.slice([0, 2, 3][offset], (offset + bytes.length) % 3 ? -1 : undefined);
    if (core.length >= MIN_SECRET) forms.push(spelled(core), spelled(core.replace(/\+/g, '-').replace(/\//g, '_')));
  }
  return forms.join('|');
}

/** The last patterns built: doctor masks every line with the same secrets, and a pattern costs milliseconds to compile. */
const built = new Map<string, RegExp | undefined>();

/** `text` with every form of every secret (of {@link MIN_SECRET} characters or more) replaced by `[secret]`. */
export function redactSecrets(text: string, secrets: Iterable<string>): string {
  const given = [...secrets].filter((s) => s.length >= MIN_SECRET);
  const key = given.join('\0');
  if (!built.has(key)) {
    // Each in both Unicode normal forms too: an app may answer `é` as one code point or as `e` and an accent.
    const all = given.flatMap((s) => [s, s.normalize('NFC'), s.normalize('NFD')]);
    // Longer secrets first: where one holds another, the whole of it is masked (one pass: a mask is not masked again).
    const patterns = [...new Set(all)].toSorted((a, b) => b.length - a.length).map(secretPattern);
    if (built.size >= 8) built.delete(built.keys().next().value as string);
    built.set(key, patterns.length ? new RegExp(patterns.join('|'), 'g') : undefined);
  }
  const pattern = built.get(key);
  return pattern ? text.replace(pattern, MASK) : text;
}

/**
 * How far into a text the masking must look to mask everything in its first `chars` characters:
 * a secret's longest form (a 3-byte character as `%e7%a7%98`, then a line break) is 12 characters
 * for each of its own. The rest would be cut anyway, and masking 64 KB costs a quarter of a second.
 */
export function maskReach(chars: number, secrets: Iterable<string>): number {
  return chars + 12 * Math.max(0, ...[...secrets].map((s) => s.length));
}

/** `report` with every secret in its text (URL, details, fixes: a header value a line quotes too), in any form, replaced by `[secret]`. */
export function redactReport<T extends string>(report: CheckReport<T>, secrets: string[]): CheckReport<T> {
  const clean = (text: string) => redactSecrets(text, secrets);
  return { ...report, url: clean(report.url), checks: report.checks.map((c) => ({ ...c, detail: clean(c.detail), ...(c.fix ? { fix: clean(c.fix) } : {}) })) };
}
