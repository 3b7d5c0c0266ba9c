import { describeValue, fail } from '../../shared/check.js';
import { authority, controls, dots, withoutUserinfo } from '../../shared/url.js';
import type { SearchParams } from '../types.js';

// Built by hand: mini-program hosts have neither URL nor URLSearchParams.

/** `scheme://host[:port]` in lower case, without the scheme's default port; userinfo kept out. */
export function originOf(url: string): string {
  const m = authority.exec(url) as RegExpExecArray;
  const scheme = m[1].toLowerCase();
  const host = m[2].toLowerCase();
  const defaultPort = scheme === 'https://' ? ':443' : scheme === 'http://' ? ':80' : '';
  return scheme + (defaultPort && host.slice(-defaultPort.length) === defaultPort ? host.slice(0, -defaultPort.length) : host);
}

/**
 * Resolves a request path against the base URL and appends the query. Whatever the path, the
 * URL built stays on baseUrl's origin and under its path, as a WHATWG parser, a mini-program
 * host or the server behind a gateway would read it: input those would rewrite is refused.
 */
export function buildUrl(base: string, path: string, searchParams?: SearchParams): string {
  // The common path, letters, digits, "-", "_" and "/" only, has nothing to refuse or resolve.
  const url = typeof path === 'string' && plainPath.test(path) ? base + (path.charAt(0) === '/' ? path : '/' + path) : checkedUrl(base, path);
  const query = serialize(searchParams);
  return query ? url + (url.indexOf('?') < 0 ? '?' : '&') + query : url;
}

const plainPath = /^\/?[\w-]+(?:\/[\w-]*)*$/;

/** `path` (any other path, or a full URL under baseUrl) resolved against `base`, or a ConfigError. */
function checkedUrl(base: string, path: string): string {
  if (typeof path !== 'string') fail('the path must be a string such as "/open/api/v1/sdk/orders"; got ' + describeValue(path));
  if (path.indexOf('#') >= 0)
    fail('the path "' + withoutUserinfo(path) + '" has a fragment (#...), which is never sent to a server; remove it (put query values in searchParams)');
  // Not quoted: a line break would break the message too.
  if (controls.test(path) || /^[^?]*\\/.test(path))
    fail(
      'the path has a backslash or a control character (tab, line break...), which URL parsers rewrite; use "/" between segments and put values in searchParams',
    );
  // `scheme://` starts a full URL; `orders:batchGet` is a relative path with a colon.
  if (authority.test(path)) {
    // A full URL may only point at the service, under baseUrl's path: the token must not leak
    // to another origin, or to another application behind the same gateway.
    const origin = originOf(path);
    const rest = path.replace(authority, '');
    const own = base.replace(authority, '');
    if (origin.indexOf('@') >= 0 || origin !== originOf(base) || rest.slice(0, own.length) !== own || !/^([/?]|$)/.test(rest.slice(own.length))) {
      fail('refusing to send the token to ' + withoutUserinfo(origin) + ': pass a path relative to baseUrl (' + base + ')');
    }
    path = rest.slice(own.length);
    return base + (path.charAt(0) === '?' || !path ? path : '/' + resolveDots(path));
  }
  return base + '/' + resolveDots(path);
}

/**
 * The path without its leading slash, with `.` and `..` segments (also percent-encoded)
 * resolved. A `..` that would climb above baseUrl's own path is refused: `/../admin`
 * must not reach another application behind the same gateway; so is a segment that only a
 * decoding server would read as one.
 */
function resolveDots(path: string): string {
  // Most paths have no dot segment at all: nothing to resolve.
  if (!/\.|%2e|%25/i.test(path)) return path.charAt(0) === '/' ? path.slice(1) : path;
  const q = path.indexOf('?');
  const segments = (q < 0 ? path : path.slice(0, q)).replace(/^\//, '').split('/');
  const out: string[] = [];
  for (const segment of segments) {
    const kind = dots(segment);
    if (kind < 0 || (kind === 2 && !out.length)) {
      fail(
        'the path "' +
          path +
          '" climbs above baseUrl with "..", or has a segment a decoding server reads as "." or ".." (%2F, %5C, %25, ";"); pass a plain path inside baseUrl',
      );
    }
    if (kind === 2) out.pop();
    else if (!kind) out.push(segment);
  }
  return out.join('/') + (q < 0 ? '' : path.slice(q));
}

function serialize(params: SearchParams | undefined): string {
  if (params === undefined) return '';
  if (typeof params === 'string') return params.replace(/^\?/, '');
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    fail('searchParams must be a string or an object of names to values; got ' + describeValue(params));
  }
  let out = '';
  for (const key of Object.keys(params)) {
    const value = params[key];
    if (value === undefined) continue;
    const list = Array.isArray(value) ? value : [value];
    for (const item of list) {
      if (item !== null && typeof item === 'object')
        fail('searchParams.' + key + ' must be a string, number, boolean or an array of them; got ' + describeValue(item));
      out += (out ? '&' : '') + encodeURIComponent(key) + '=' + encodeURIComponent(String(item));
    }
  }
  return out;
}
