// @vitest-environment node
/**
 * Issue #20 item 5: no path reaches above baseUrl's path, whatever a URL parser or the server
 * makes of it. buildUrl runs without `URL` (mini-program hosts lack it); here every URL it
 * accepts is read back by Node's WHATWG `new URL()`, and by a server that decodes %2E/%2F/%5C/%25
 * and cuts `;` parameters (Tomcat behind a gateway), and must stay under baseUrl.
 */
import * as fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { buildUrl } from '../../src/core/requests/build-url.js';
import { normalizeBaseUrl } from '../../src/shared/url.js';
import { ConfigError } from '../../src/errors/index.js';
import { createClient as createFetchClient } from '../../src/index.js';
import { createClient as createMiniClient } from '../../src/miniprogram.js';
import { makeJwt } from '../helpers/fake-service.js';
import { createHost } from '../helpers/hosts.js';
import { sendJson, startServer } from '../helpers/server.js';
import { sized } from '../helpers/tier.js';

const bases = ['https://api.example.com', 'https://gw.example.com/channel/v1', 'http://127.0.0.1:8787/gw'];

/** The segments of a path as a decoding server resolves them (null once one climbs above the root). */
function serverSegments(pathname: string): string[] | null {
  let s = pathname;
  while (/%25/i.test(s)) s = s.replace(/%25/gi, '%');
  const pieces = s.replace(/%2e/gi, '.').replace(/%2f/gi, '/').replace(/%5c/gi, '\\').split(/[/\\]/);
  const out: string[] = [];
  for (const raw of pieces) {
    const piece = raw.split(';')[0].trim();
    if (piece === '..') {
      if (!out.length) return null;
      out.pop();
    } else if (piece !== '.' && piece !== '') out.push(piece);
  }
  return out;
}

/** Whether `url` stays on base's origin and under its path, read by WHATWG and by a decoding server. */
function staysUnder(base: string, url: string): true | string {
  const b = new URL(base);
  const u = new URL(url);
  if (u.origin !== b.origin) return 'origin ' + u.origin;
  const own = b.pathname.replace(/\/$/, '');
  if (!(u.pathname === own || u.pathname.startsWith(own + '/') || (own === '' && u.pathname === '/'))) return 'WHATWG path ' + u.pathname;
  const server = serverSegments(u.pathname);
  const prefix = serverSegments(own) as string[];
  if (!server || prefix.some((segment, i) => server[i] !== segment)) return 'server path ' + (server ? server.join('/') : 'above the root');
  return true;
}

/** buildUrl's URL, or the ConfigError it refused with. */
function attempt(base: string, path: string): string | ConfigError {
  try {
    return buildUrl(normalizeBaseUrl(base), path);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
}

describe('paths never climb above baseUrl (issue #20 item 5)', () => {
  test("the issue's paths and their relatives are refused with a message that says what to do", () => {
    const refused: Array<[string, RegExp]> = [
      ['\\..\\..\\admin', /backslash or a control character \(tab, line break\.\.\.\), which URL parsers rewrite; use "\/" between segments/],
      ['/a\\..\\..\\admin', /backslash or a control character/],
      ['/.\t./admin', /backslash or a control character/],
      ['/..\n/admin', /backslash or a control character/],
      ['/.\r./admin', /backslash or a control character/],
      ['/a/\0', /backslash or a control character/],
      ['/a/\x7f', /backslash or a control character/],
      ['/x?q=\n', /backslash or a control character/],
      ['/../admin', /climbs above baseUrl/],
      ['/%2e%2e/admin', /climbs above baseUrl/],
      ['/%2E./admin', /climbs above baseUrl/],
      ['/.%2e/admin', /climbs above baseUrl/],
      ['/a/../../admin', /climbs above baseUrl/],
      ['/..%2fadmin', /a decoding server reads as "\." or "\.\."/],
      ['/a/..%2F..%2Fadmin', /a decoding server reads as "\." or "\.\."/],
      ['/..%5cadmin', /a decoding server reads as "\." or "\.\."/],
      ['/%252e%252e/admin', /a decoding server reads as "\." or "\.\."/],
      ['/..;/admin', /a decoding server reads as "\." or "\.\."/],
      ['/..;jsessionid=1/admin', /a decoding server reads as "\." or "\.\."/],
      ['/.. ', /a decoding server reads as "\." or "\.\."/],
      ['https://gw.example.com/admin', /refusing to send the token to https:\/\/gw\.example\.com: pass a path relative to baseUrl/],
      ['https://gw.example.com/channel/v1/../../admin', /climbs above baseUrl/],
      ['https://gw.example.com/channel/v1x/y', /refusing to send the token to https:\/\/gw\.example\.com: pass a path relative to baseUrl/],
      ['https:\\\\evil.example/x', /backslash or a control character/],
    ];
    const outcome = (path: string) => {
      const result = attempt('https://gw.example.com/channel/v1', path);
      return result instanceof ConfigError ? result.message : 'accepted: ' + result;
    };
    expect(refused.map(([path]) => [path, outcome(path)])).toEqual(refused.map(([path, message]) => [path, expect.stringMatching(message)]));
  });

  test('ordinary paths still work: dots inside names, encoded slashes without dots, colons, ; and a full URL under baseUrl', () => {
    const base = 'https://gw.example.com/channel/v1';
    const accepted: Array<[string, string]> = [
      ['/open/api/v1/sdk/orders/SO2024', base + '/open/api/v1/sdk/orders/SO2024'],
      ['orders:batchGet', base + '/orders:batchGet'],
      ['/a/../b/./c', base + '/b/c'],
      ['/files/A%2FB', base + '/files/A%2FB'],
      ['/a;b=1/c', base + '/a;b=1/c'],
      ['/v1.2/x..y/.well-known', base + '/v1.2/x..y/.well-known'],
      ['/x?path=..\\..', base + '/x?path=..\\..'],
      ['https://gw.example.com/channel/v1/x', base + '/x'],
      ['https://GW.example.com:443/channel/v1?q=1', base + '?q=1'],
    ];
    const href = (url: string | ConfigError) => (url instanceof ConfigError ? url.message : new URL(url).href);
    expect(accepted.map(([path]) => [path, href(attempt(base, path))])).toEqual(accepted.map(([path, url]) => [path, href(url)]));
  });

  test('baseUrl itself: a backslash, a control character or a dot segment in it is refused', () => {
    const bad = [
      'https://api.example.com\\evil',
      'https://api.example.com/a\\b',
      'https://api.example.com/a\x01',
      'https://api.example.com/a/../b',
      'https://api.example.com/%2e%2e/b',
    ];
    const refusedBase = (base: string) => {
      try {
        return normalizeBaseUrl(base);
      } catch (error) {
        return error instanceof ConfigError ? 'refused' : error;
      }
    };
    expect(bad.map(refusedBase)).toEqual(bad.map(() => 'refused'));
    expect(normalizeBaseUrl('https://api.example.com/a.b/')).toBe('https://api.example.com/a.b');
  });

  test("over both transports, the issue's paths never reach the server above /gw with the token", async () => {
    const seen: string[] = [];
    const server = await startServer((req, res) => {
      seen.push(req.url ?? '');
      sendJson(res, 200, { code: 0, data: req.url });
    });
    try {
      const options = { baseUrl: server.url + '/gw', tokenProvider: () => makeJwt({ iat: 1, exp: 2e9 }), retry: 0 };
      const clients = [createFetchClient(options), createMiniClient({ ...options, request: createHost('wx').request })];
      const paths = ['\\..\\..\\admin', '/.\t./admin', '/..\n/admin', '/%2e%2e/admin', '/a/..%2f..%2fadmin', '/..;/admin', server.url + '/admin', '/ok'];
      for (const client of clients) for (const path of paths) await client.get(path).catch(() => undefined);
      expect(seen).toEqual(['/gw/ok', '/gw/ok']);
    } finally {
      await server.close();
    }
  });

  // The pieces attackers combine: separators, dots in every encoding, what parsers strip, parameters.
  const pieces = [
    '/',
    '/',
    '\\',
    '.',
    '..',
    '%2e',
    '%2E',
    '%2f',
    '%2F',
    '%5c',
    '%25',
    '%252e',
    ';',
    ';x',
    '\t',
    '\n',
    '\r',
    ' ',
    '\0',
    '\x1f',
    '\x7f',
    'a',
    'admin',
    '?',
    '=..',
    '%',
    '@',
    ':',
    '//',
    '．',
    '\u2025',
    'https://gw.example.com',
    'https://gw.example.com:443',
    'https://evil.example',
    'http://127.0.0.1:8787',
  ];
  const tricky = fc.array(fc.constantFrom(...pieces), { maxLength: 14 }).map((parts) => parts.join(''));

  test("property: every path buildUrl accepts resolves under baseUrl's path, read by new URL() and by a decoding server", () => {
    fc.assert(
      fc.property(fc.constantFrom(...bases), fc.oneof(tricky, fc.string({ unit: 'binary-ascii', maxLength: 24 })), (base, path) => {
        const result = attempt(base, path);
        if (result instanceof ConfigError) return true;
        expect({ base, path, result, verdict: staysUnder(normalizeBaseUrl(base), result) }).toMatchObject({ verdict: true });
        return true;
      }),
      { numRuns: sized(20_000, 2_000) },
    );
  });
});
