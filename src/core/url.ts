import { describe, fail } from './check.js';
import type { SearchParams } from './types.js';

// Built by hand: mini-program hosts have neither URL nor URLSearchParams.

/** `scheme://` starts a full URL; `orders:batchGet` is a relative path with a colon. */
const absolute = /^[a-z][a-z\d+.-]*:\/\//i;
const authority = /^([a-z][a-z\d+.-]*:\/\/)([^/?#]*)/i;

/** `https://host[:port][/base]` without a trailing slash, or throws ConfigError. */
export function normalizeBaseUrl(value: unknown): string {
  // Checked first and never echoed: the password would end up in every error and event.
  if (typeof value === 'string' && /@/.test((authority.exec(value) || ['', '', ''])[2])) {
    fail('baseUrl must not contain a user name or password (user:password@host); remove them, channel-sdk authenticates with the token');
  }
  if (typeof value !== 'string' || !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/i.test(value)) {
    fail('baseUrl must be an absolute http(s) URL without query or fragment, e.g. "https://api.example.com"; got ' + describe(value));
  }
  return value.replace(/\/+$/, '');
}

/** `scheme://host[:port]` in lower case, without the scheme's default port; userinfo kept out. */
function originOf(url: string): string {
  const m = authority.exec(url) as RegExpExecArray;
  const scheme = m[1].toLowerCase();
  const host = m[2].toLowerCase();
  const defaultPort = scheme === 'https://' ? ':443' : scheme === 'http://' ? ':80' : '';
  return scheme + (defaultPort && host.slice(-defaultPort.length) === defaultPort ? host.slice(0, -defaultPort.length) : host);
}

/** Resolves a request path against the base URL and appends the query. */
export function buildUrl(base: string, path: string, searchParams?: SearchParams): string {
  if (typeof path !== 'string') fail('the path must be a string such as "/open/api/v1/sdk/orders"; got ' + describe(path));
  if (path.indexOf('#') >= 0) fail('the path "' + path + '" has a fragment (#...), which is never sent to a server; remove it (put query values in searchParams)');
  let url: string;
  if (absolute.test(path)) {
    // A full URL may only point at the service: the token must not leak to another origin.
    const origin = originOf(path);
    if (origin.indexOf('@') >= 0 || origin !== originOf(base)) {
      fail('refusing to send the token to ' + origin.replace(/\/\/.*@/, '//') + ': pass a path relative to baseUrl (' + base + ')');
    }
    url = path;
  } else {
    url = base + '/' + resolveDots(path);
  }
  const query = serialize(searchParams);
  return query ? url + (url.indexOf('?') < 0 ? '?' : '&') + query : url;
}

/**
 * The path without its leading slash, with `.` and `..` segments (also percent-encoded)
 * resolved. A `..` that would climb above baseUrl's own path is refused: `/../admin`
 * must not reach another application behind the same gateway.
 */
function resolveDots(path: string): string {
  // Most paths have no dot segment at all: nothing to resolve.
  if (!/\.|%2e/i.test(path)) return path.charAt(0) === '/' ? path.slice(1) : path;
  const q = path.indexOf('?');
  const segments = (q < 0 ? path : path.slice(0, q)).replace(/^\//, '').split('/');
  const out: string[] = [];
  for (const segment of segments) {
    const plain = segment.replace(/%2e/gi, '.');
    if (plain === '..') {
      if (!out.length) fail('the path "' + path + '" climbs above baseUrl with ".."; pass a path inside it');
      out.pop();
    } else if (plain !== '.') out.push(segment);
  }
  return out.join('/') + (q < 0 ? '' : path.slice(q));
}

function serialize(params: SearchParams | undefined): string {
  if (params === undefined) return '';
  if (typeof params === 'string') return params.replace(/^\?/, '');
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    fail('searchParams must be a string or an object of names to values; got ' + describe(params));
  }
  let out = '';
  for (const key of Object.keys(params)) {
    const value = params[key];
    if (value === undefined) continue;
    const list = Array.isArray(value) ? value : [value];
    for (const item of list) {
      if (item !== null && typeof item === 'object') fail('searchParams.' + key + ' must be a string, number, boolean or an array of them; got ' + describe(item));
      out += (out ? '&' : '') + encodeURIComponent(key) + '=' + encodeURIComponent(String(item));
    }
  }
  return out;
}
