// Base URLs, checked and normalised the same way by the client and the token exchange.
import { describeValue, fail } from './check.js';

/** `scheme://` and the authority (`[userinfo@]host[:port]`) of a full URL. */
export const authority = /^([a-z][a-z\d+.-]*:\/\/)([^/?#]*)/i;
/**
 * What URL parsers drop or rewrite before they resolve a path: C0 controls and DEL (a WHATWG
 * parser strips tab, CR and LF anywhere, so `/.\t./` becomes `/../`) and, before the query,
 * the backslash (read as `/` in http(s) URLs, so `\..\admin` climbs).
 */
// eslint-disable-next-line no-control-regex -- the control characters are what it looks for
export const controls = /[\0-\x1f\x7f]/;

/**
 * `url` without the userinfo (`user:password@`) a URL parser would read in it, for an error or an
 * event to quote: as a WHATWG parser reads it, with tabs and line breaks anywhere, backslashes
 * for slashes, and up to the last `@` before the path, query or fragment. A relative path
 * (`orders:batchGet@v2`) is kept as it is.
 */
export const withoutUserinfo = (url: string): string => url.replace(/^([\0- ]*[a-z][a-z\d+.\-\t\n\r]*:[\t\n\r]*[/\\][/\\\t\n\r]*)[^/\\?#]*@/i, '$1');

/** `https://host[:port][/base]` without a trailing slash, or throws ConfigError. */
export function normalizeBaseUrl(value: unknown): string {
  // Checked first and never echoed: the password would end up in every error and event.
  if (typeof value === 'string' && withoutUserinfo(value) !== value) {
    fail('baseUrl must not contain a user name or password (user:password@host); remove them, channel-sdk authenticates with the token');
  }
  // Paths are checked to stay under baseUrl's path, which must therefore be a plain one.
  if (
    typeof value !== 'string' ||
    !/^https?:\/\/[^/?#\s\\]+(\/[^?#\s\\]*)?$/i.test(value) ||
    controls.test(value) ||
    value.replace(authority, '').split('/').some(dots)
  ) {
    fail(
      'baseUrl must be an absolute http(s) URL without query or fragment (and no \\, control character, . or .. in its path), e.g. "https://api.example.com"; got ' +
        describeValue(value),
    );
  }
  return value.replace(/\/+$/, '');
}

/**
 * `.` and `..` as a WHATWG parser reads a segment (`%2e` is a dot there): 1 or 2, else 0.
 * A server may also decode `%25`, `%2F` and `%5C`, cut `;` parameters (Tomcat's `..;`) and
 * trim spaces (a parser strips them at the end of a URL): a segment that only such a reading
 * makes a dot segment gives -1.
 */
export function dots(segment: string): number {
  const plain = segment.replace(/%2e/gi, '.');
  if (plain === '.' || plain === '..') return plain.length;
  let s = segment;
  while (/%25/i.test(s)) s = s.replace(/%25/gi, '%');
  return s
    .replace(/%2e/gi, '.')
    .split(/%2f|%5c/i)
    .some((piece) => /^\.\.?$/.test(piece.split(';')[0].trim()))
    ? -1
    : 0;
}
