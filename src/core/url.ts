import { ConfigError } from '../errors/ConfigError.js';
import type { SearchParams } from './types.js';

// Built by hand: mini-program hosts have neither URL nor URLSearchParams.

const absolute = /^[a-z][a-z\d+.-]*:/i;

/** `https://host[:port][/base]` without a trailing slash, or throws ConfigError. */
export function normalizeBaseUrl(value: unknown): string {
  if (typeof value !== 'string' || !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/i.test(value)) {
    throw new ConfigError(
      'baseUrl must be an absolute http(s) URL without query or fragment, e.g. "https://api.example.com"; got ' +
        describe(value),
    );
  }
  return value.replace(/\/+$/, '');
}

function originOf(base: string): string {
  return base.replace(/^(https?:\/\/[^/]+).*$/i, '$1');
}

/** Resolves a request path against the base URL and appends the query. */
export function buildUrl(base: string, path: string, searchParams?: SearchParams): string {
  let url: string;
  if (absolute.test(path)) {
    // A full URL may only point at the service: the token must not leak to another origin.
    const origin = originOf(base);
    if (path.toLowerCase().indexOf(origin.toLowerCase() + '/') !== 0 && path.toLowerCase() !== origin.toLowerCase()) {
      throw new ConfigError(
        'refusing to send the token to ' + originOf(path) + ': pass a path relative to baseUrl (' + base + ')',
      );
    }
    url = path;
  } else {
    url = base + (path.charAt(0) === '/' ? path : '/' + path);
  }
  const query = serialize(searchParams);
  return query ? url + (url.indexOf('?') < 0 ? '?' : '&') + query : url;
}

function serialize(params: SearchParams | undefined): string {
  if (params === undefined) return '';
  if (typeof params === 'string') return params.replace(/^\?/, '');
  let out = '';
  for (const key of Object.keys(params)) {
    const value = params[key];
    if (value === undefined) continue;
    const list = Array.isArray(value) ? value : [value];
    for (const item of list) out += (out ? '&' : '') + encodeURIComponent(key) + '=' + encodeURIComponent(String(item));
  }
  return out;
}

/** A short, token-free description of a value for an error message. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  if (type === 'string') return (value as string).length > 80 ? 'a long string' : JSON.stringify(value);
  return type === 'object' ? 'an object' : type === 'undefined' ? 'undefined' : 'a ' + type;
}

/** Throws ConfigError for a key outside `known`, suggesting the one it was probably meant to be. */
export function checkKeys(value: object, known: string[], what: string): void {
  for (const key of Object.keys(value)) {
    if (known.indexOf(key) < 0) {
      const near = known.filter((k) => k.toLowerCase() === key.toLowerCase())[0];
      throw new ConfigError('unknown ' + what + ' "' + key + '"' + (near ? '; did you mean "' + near + '"?' : '; known: ' + known.join(', ')));
    }
  }
}
