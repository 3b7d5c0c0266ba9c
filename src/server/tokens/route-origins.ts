// Which browsers' requests the token route serves, and the CORS answers that let a page on an
// allowed origin read them: same-origin and same-site pages, mini-program hosts, apps and
// servers pass; a page on another site passes only when it is listed in `allowedOrigins`.
import { describeValue, fail } from '../../shared/check.js';
import type { Incoming, Outgoing } from '../http/route.js';

const ORIGIN = /^https?:\/\/[^/?#\s@]+$/i;
// A list of header names (RFC 9110 tokens), as a preflight's Access-Control-Request-Headers says.
const HEADER_NAMES = /^[!#$%&'*+.^_`|~\w-]+(?:\s*,\s*[!#$%&'*+.^_`|~\w-]+)*$/;
/** How long a browser may keep a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = '600';

/** `host[:port]` of an origin or Host header, lower-case, without the scheme's default port. */
function hostPart(value: string): string {
  const host = value.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').toLowerCase();
  return /^https:/i.test(value) ? host.replace(/:443$/, '') : host.replace(/:80$/, '');
}

/** `allowedOrigins` checked once: a test of an `Origin` header. */
export function checkAllowedOrigins(value: unknown): (origin: string) => boolean {
  if (value === undefined) return () => false;
  if (typeof value === 'function') return (origin) => (value as (origin: string) => unknown)(origin) === true;
  if (!Array.isArray(value))
    fail('allowedOrigins must be an array of origins such as ["https://shop.example.com"], or a function (origin) => boolean; got ' + describeValue(value));
  const allowed = new Set<string>();
  value.forEach((item: unknown, i) => {
    const origin = typeof item === 'string' ? item.replace(/\/+$/, '') : item;
    if (typeof origin !== 'string' || !ORIGIN.test(origin)) {
      fail('allowedOrigins[' + i + '] must be an origin: scheme, host and port only, such as "https://shop.example.com"; got ' + describeValue(item));
    }
    allowed.add(origin.toLowerCase());
  });
  return (origin) => allowed.has(origin.toLowerCase());
}

/** The request's `Origin` when it is one that `allowed` lists (never `null`), else undefined. */
export function allowedOrigin(incoming: Incoming, allowed: (origin: string) => boolean): string | undefined {
  const origin = incoming.header('origin');
  return origin !== undefined && origin !== 'null' && allowed(origin) ? origin : undefined;
}

/** Why a request is a browser's cross-site request the route refuses, or undefined. */
export function crossSite(incoming: Incoming, allowed: (origin: string) => boolean): string | undefined {
  if (allowedOrigin(incoming, allowed)) return undefined;
  const origin = incoming.header('origin');
  const site = incoming.header('sec-fetch-site');
  // Every current browser says where a request comes from; `none` is the user's own navigation.
  if (site !== undefined)
    return site.trim().toLowerCase() === 'cross-site'
      ? 'a cross-site request (Sec-Fetch-Site: cross-site' + (origin ? ', Origin ' + origin : '') + ')'
      : undefined;
  // No Origin: not a browser's cross-origin request. Mini-program hosts (a servicewechat.com
  // Referer, no Origin), apps and servers come this way.
  if (origin === undefined) return undefined;
  if (origin === 'null') return 'a request from an opaque origin (Origin: null: a sandboxed frame or a local file)';
  // An older browser: same origin as the Host (or the proxy's X-Forwarded-Host) it was sent to.
  const host = hostPart(origin);
  const hosts = [incoming.header('host'), incoming.header('x-forwarded-host')?.split(',')[0].trim(), incoming.authority?.()];
  return hosts.some((h) => h !== undefined && h !== '' && hostPart(h) === host) ? undefined : 'a request from another origin (Origin ' + origin + ')';
}

/** `out` with the CORS headers that let the page on `origin` (an allowed one) read it, cookies included. */
export function withCors(out: Outgoing, origin: string): Outgoing {
  const headers = { ...out.headers, 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', vary: 'Origin' };
  return { ...out, headers };
}

/**
 * The answer to a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`) from an
 * allowed origin: 204, GET and POST allowed, the headers asked for allowed, kept 10 minutes.
 */
export function preflightAnswer(incoming: Incoming, origin: string): Outgoing {
  const asked = incoming.header('access-control-request-headers');
  const headers: Record<string, string> = {
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    'access-control-allow-methods': 'GET, POST',
    'access-control-max-age': PREFLIGHT_MAX_AGE,
    vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
  };
  if (asked !== undefined && asked.length <= 1000 && HEADER_NAMES.test(asked.trim())) headers['access-control-allow-headers'] = asked.trim();
  return { status: 204, body: '', headers };
}
