/**
 * The token route served over real HTTP (node:http, Express) with a real exchange against the
 * sandbox: what it refuses (a resolveUser answer that is not an id, browsers' cross-site
 * requests, POSTs that are not JSON) and how many token calls forced refreshes cost.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  ConfigError,
  createTokenExchange,
  createTokenRoute,
  toNodeHandler,
  type TokenRouteErrorInfo,
  type TokenRouteOptions,
} from '../../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { createClient } from '../../../src/index.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** A route on node:http with a real exchange against the sandbox; the user id comes from `x-user`. */
async function routeServer(extra: Partial<TokenRouteOptions<{ headers: Record<string, string | string[] | undefined> }>> = {}) {
  const reports: Array<[unknown, TokenRouteErrorInfo]> = [];
  const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
  const route = createTokenRoute({
    exchange,
    resolveUser: (req: { headers: Record<string, string | string[] | undefined> }) => req.headers['x-user'] as string | undefined,
    onError: (error, info) => void reports.push([error, info]),
    ...extra,
  });
  const server = await serve(toNodeHandler(route));
  return { ...server, reports };
}

/** A raw HTTP request, so that the test sets exactly the headers a browser or a host would (fetch forbids Origin, Referer, Sec-*). */
function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; json: { access_token?: string; error?: string } }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : {} }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** True when the sandbox accepts `token` on a data call. */
async function accepted(token: string): Promise<boolean> {
  const response = await fetch(sandbox.url + '/open/api/v1/sdk/orders', { headers: { authorization: 'Bearer ' + token } });
  await response.body?.cancel();
  return response.status === 200;
}

describe('resolveUser answers that are not an id (#21.4)', () => {
  test('an object from resolveUser (real Express, req.user instead of req.user.id) -> 500, one onError report saying to return the id, the token endpoint never called', async () => {
    const reports: Array<[unknown, TokenRouteErrorInfo]> = [];
    const app = express();
    app.use((req, _res, next) => {
      (req as typeof req & { user: object }).user = { id: String(req.headers['x-user']), name: 'someone' };
      next();
    });
    const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
    app.get(
      '/channel-token',
      toNodeHandler(
        createTokenRoute({
          exchange,
          resolveUser: (req: express.Request & { user?: object }) => req.user as never, // the slip: the object, not its id
          onError: (error, info) => void reports.push([error, info]),
        }),
      ),
    );
    const server = await serve(app);
    const calls = sandbox.stats.tokenCalls;
    try {
      const answers = await Promise.all(['alice', 'bob'].map((user) => send(server.url + '/channel-token', { headers: { 'x-user': user } })));
      expect(answers.map((a) => [a.status, a.json])).toEqual([
        [500, { error: 'could not tell who is signed in' }],
        [500, { error: 'could not tell who is signed in' }],
      ]);
    } finally {
      await server.close();
    }
    expect(sandbox.stats.tokenCalls - calls).toBe(0);
    expect(reports.map(([, info]) => info)).toEqual([
      { stage: 'user', status: 500 },
      { stage: 'user', status: 500 },
    ]);
    const error = reports[0][0] as Error;
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(
      /resolveUser returned an object with keys id, name \(return its \.id\); return the signed-in user's id as a non-empty string or a whole number up to 2\^53 - 1/,
    );
    expect(error.message).not.toMatch(/alice|bob|object Object/);
  });

  test.each([
    ['an array', ['alice'], /resolveUser returned an array/],
    ['true', true, /resolveUser returned true/],
    ['NaN', Number.NaN, /resolveUser returned NaN/],
    ['Infinity', Number.POSITIVE_INFINITY, /resolveUser returned Infinity/],
    ['a bigint', 10n, /resolveUser returned a bigint \(return String\(id\)\)/],
    ['a function', () => 'alice', /resolveUser returned a function/],
    ['a Promise of an object', Promise.resolve({ id: 1 }), /resolveUser returned an object with keys id/],
  ])('resolveUser returning %s -> 500, one report, no token call', async (_label, value, message) => {
    const route = await routeServer({ resolveUser: () => value as never });
    const calls = sandbox.stats.tokenCalls;
    try {
      expect((await send(route.url + '/t')).status).toBe(500);
    } finally {
      await route.close();
    }
    expect(sandbox.stats.tokenCalls - calls).toBe(0);
    expect(route.reports).toHaveLength(1);
    expect(route.reports[0][1]).toEqual({ stage: 'user', status: 500 });
    expect((route.reports[0][0] as Error).message).toMatch(message);
  });

  // #30.1: users 9007199254740993 and 9007199254740992 of a database, read as JavaScript numbers,
  // are both 9007199254740992: each was handed that one user's token.
  test('numeric ids beyond 2^53 - 1 (two users whose ids differ in the last digit) -> 500 for both, a report saying to return a string, no token call', async () => {
    const route = await routeServer({ resolveUser: (req) => Number(req.headers['x-user']) });
    const calls = sandbox.stats.tokenCalls;
    try {
      const answers = await Promise.all(['9007199254740993', '9007199254740992', '12.5'].map((id) => send(route.url + '/t', { headers: { 'x-user': id } })));
      expect(answers.map((a) => [a.status, a.json.access_token === undefined ? 'no token' : 'a token'])).toEqual([
        [500, 'no token'],
        [500, 'no token'],
        [500, 'no token'],
      ]);
    } finally {
      await route.close();
    }
    expect(sandbox.stats.tokenCalls - calls).toBe(0);
    expect(route.reports.map(([error, info]) => [info.stage, (error as Error).message.replace(/;.*/, '').replace('[channel-sdk] ', '')]).toSorted()).toEqual(
      [
        [
          'user',
          'resolveUser returned the number 9007199254740992, beyond 2^53 - 1: a JavaScript number that large has lost its last digits, so distinct users share it (return the id as a string, as your database holds it)',
        ],
        [
          'user',
          'resolveUser returned the number 9007199254740992, beyond 2^53 - 1: a JavaScript number that large has lost its last digits, so distinct users share it (return the id as a string, as your database holds it)',
        ],
        ['user', 'resolveUser returned the number 12.5, not a whole number'],
      ].toSorted(),
    );
  });

  test('ids that are fine: a string, a number (sent as its digits), 0; null, undefined and "" are nobody (401)', async () => {
    for (const [user, status] of [
      ['alice', 200],
      [42, 200],
      [0, 200],
      [null, 401],
      [undefined, 401],
      ['', 401],
    ] as const) {
      const route = await routeServer({ resolveUser: () => user });
      try {
        expect([user, (await send(route.url + '/t')).status]).toEqual([user, status]);
      } finally {
        await route.close();
      }
      expect(route.reports).toEqual([]);
    }
  });
});

describe('forced refreshes (#21.5)', () => {
  /** `total` forced GETs by one user, `concurrency` at a time: the tokens answered, and the failures. */
  async function forcedGets(url: string, total: number, concurrency: number) {
    const tokens = new Set<string>();
    const failed: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < total) {
          const answer = await send(url + '/channel-token?force=1', { headers: { 'x-user': 'heavy-user' } });
          if (answer.status === 200 && answer.json.access_token) tokens.add(answer.json.access_token);
          else failed.push(answer.status);
        }
      }),
    );
    return { tokens, failed };
  }

  test.each([
    ['10 at a time', 10],
    ['one at a time', 1],
    ['all at once', 300],
  ])('300 GET ?force=1 by one signed-in user (%s) -> < 30 token-endpoint calls, every answer a token the service accepts', async (_label, concurrency) => {
    const route = await routeServer();
    const calls = sandbox.stats.tokenCalls;
    try {
      const { tokens, failed } = await forcedGets(route.url, 300, concurrency);
      expect(failed).toEqual([]);
      expect(sandbox.stats.tokenCalls - calls).toBeLessThan(30);
      for (const token of tokens) expect(await accepted(token)).toBe(true);
    } finally {
      await route.close();
    }
  });

  test('force still bypasses the cache: a token from a plain call never answers a forced one', async () => {
    const route = await routeServer();
    try {
      const plain = await send(route.url + '/t', { headers: { 'x-user': 'carol' } });
      const forced = await send(route.url + '/t?force=1', { headers: { 'x-user': 'carol' } });
      expect(forced.json.access_token).not.toBe(plain.json.access_token);
      // Within the window, the forced token answers further forced calls; plain calls get it too.
      const again = await send(route.url + '/t', {
        method: 'POST',
        headers: { 'x-user': 'carol', 'content-type': 'application/json' },
        body: '{"forceRefresh":true}',
      });
      expect(again.json.access_token).toBe(forced.json.access_token);
      expect((await send(route.url + '/t', { headers: { 'x-user': 'carol' } })).json.access_token).toBe(forced.json.access_token);
    } finally {
      await route.close();
    }
  });
});

describe('cross-site requests and non-JSON POSTs are refused (#21.5)', () => {
  const forceBody = '{"forceRefresh":true}';
  test.each([
    ['a cross-site GET (an <img> or link on another site)', 403, { method: 'GET', path: '/t?force=1', headers: { 'sec-fetch-site': 'cross-site' } }],
    [
      'a cross-site text/plain POST (a form or no-cors fetch)',
      403,
      { method: 'POST', headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example', 'content-type': 'text/plain' }, body: forceBody },
    ],
    [
      'a text/plain POST without Sec-Fetch-Site (an older browser, or curl)',
      415,
      { method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8' }, body: forceBody },
    ],
    ['an urlencoded form POST', 415, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'forceRefresh=true' }],
    ['a multipart form POST', 415, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '--x--' }],
    ['a POST with a body and no Content-Type', 415, { method: 'POST', headers: {}, body: forceBody }],
    [
      'an older browser on another origin (Origin, no Sec-Fetch-Site)',
      403,
      { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/json' }, body: forceBody },
    ],
    ['a sandboxed frame (Origin: null)', 403, { method: 'GET', path: '/t?force=1', headers: { origin: 'null' } }],
    [
      'WeChat (no Origin, a servicewechat.com Referer), GET',
      200,
      {
        method: 'GET',
        path: '/t?force=1',
        headers: { referer: 'https://servicewechat.com/wx1234567890/3/page-frame.html', 'user-agent': 'Mozilla/5.0 MicroMessenger/8.0.50 miniProgram' },
      },
    ],
    [
      'WeChat, JSON POST',
      200,
      { method: 'POST', headers: { referer: 'https://servicewechat.com/wx1234567890/3/page-frame.html', 'content-type': 'application/json' }, body: forceBody },
    ],
    [
      'Alipay (no Origin, its hybrid Referer), JSON POST',
      200,
      {
        method: 'POST',
        headers: { referer: 'https://2021000000000000.hybrid.alipay-eco.com/2021000000000000/0.2.0/index.html', 'content-type': 'application/json' },
        body: forceBody,
      },
    ],
    [
      'a same-origin page',
      200,
      { method: 'POST', headers: { 'sec-fetch-site': 'same-origin', origin: 'http://127.0.0.1', 'content-type': 'application/json' }, body: forceBody },
    ],
    [
      'a same-site page (another subdomain)',
      200,
      { method: 'GET', path: '/t?force=1', headers: { 'sec-fetch-site': 'same-site', origin: 'https://shop.partner.example' } },
    ],
    ['the user typing the URL (Sec-Fetch-Site: none)', 200, { method: 'GET', path: '/t?force=1', headers: { 'sec-fetch-site': 'none' } }],
    [
      'an older browser, same origin as the Host',
      200,
      { method: 'POST', headers: { origin: 'http://HOST', 'content-type': 'application/json' }, body: forceBody },
    ],
    ['a server or an app (no browser headers)', 200, { method: 'POST', headers: { 'content-type': 'application/json' }, body: forceBody }],
    ['a POST with no body', 200, { method: 'POST', headers: {} }],
  ] as Array<[string, number, { method: string; path?: string; headers: Record<string, string>; body?: string }]>)('%s -> %i', async (_label, status, sent) => {
    const route = await routeServer();
    const calls = sandbox.stats.tokenCalls;
    const host = route.url.replace('http://', '');
    try {
      const headers = Object.fromEntries(Object.entries({ 'x-user': 'dave', ...sent.headers }).map(([k, v]) => [k, v.replace('HOST', host)]));
      const answer = await send(route.url + (sent.path ?? '/t'), { method: sent.method, headers, body: sent.body });
      const refused = status !== 200;
      expect({ status: answer.status, tokenCalls: sandbox.stats.tokenCalls - calls, reports: route.reports.map(([, info]) => info) }).toEqual({
        status,
        tokenCalls: refused ? 0 : 1,
        reports: refused ? [{ stage: status === 403 ? 'origin' : 'body', status }] : [],
      });
    } finally {
      await route.close();
    }
  });

  test('allowedOrigins lets a partner page on another site through, and only it', async () => {
    const route = await routeServer({ allowedOrigins: ['https://partner-shop.example/'] });
    try {
      const allowed = await send(route.url + '/t?force=1', {
        headers: { 'x-user': 'erin', 'sec-fetch-site': 'cross-site', origin: 'https://partner-shop.example' },
      });
      const other = await send(route.url + '/t?force=1', {
        headers: { 'x-user': 'erin', 'sec-fetch-site': 'cross-site', origin: 'https://partner-shop.example.evil.example' },
      });
      expect([allowed.status, other.status]).toEqual([200, 403]);
    } finally {
      await route.close();
    }
  });

  test('options are checked: an unknown key suggests the right one; allowedOrigins must hold origins', () => {
    const base = { exchange: { getToken: async () => ({ accessToken: 'x', expiresIn: 1 }) }, resolveUser: () => 'u' };
    expect(() => createTokenRoute({ ...base, allowedOrigin: ['https://a.example'] } as never)).toThrow(
      /unknown createTokenRoute option "allowedOrigin"; did you mean "allowedOrigins"\?/,
    );
    expect(() => createTokenRoute({ ...base, onerror: () => {} } as never)).toThrow(/did you mean "onError"/);
    expect(() => createTokenRoute({ ...base, allowedOrigins: 'https://a.example' } as never)).toThrow(/allowedOrigins must be an array of origins/);
    expect(() => createTokenRoute({ ...base, allowedOrigins: ['https://a.example/shop'] })).toThrow(
      /allowedOrigins\[0\] must be an origin: scheme, host and port only/,
    );
    expect(() => createTokenRoute({ ...base, allowedOrigins: ['a.example'] })).toThrow(/allowedOrigins\[0\]/);
    expect(() => createTokenRoute({ ...base, onError: 'log' } as never)).toThrow(/onError must be a function/);
    expect(() => createTokenRoute({ ...base, bodyTimeout: 5000 } as never)).toThrow(/did you mean "bodyTimeoutMs"/);
    expect(() => createTokenRoute({ ...base, bodyTimeoutMs: 0 })).toThrow(/bodyTimeoutMs must be a number of milliseconds from 1/);
  });
});

/**
 * Issue #29 item 8, as QA does it: the sandbox, the README's route (createTokenRoute with its
 * defaults, so a 5 s forceRefreshWindow) and the client, "expire" pressed twice within seconds.
 * The second forced refresh used to be answered with the token the first one obtained, which the
 * sandbox had just expired: the replay got 401 and auth:failed blamed the provider's cache.
 */
describe('two expires within seconds: a forced refresh is never answered with the token just rejected (#29 item 8)', () => {
  async function qa(passRejected: boolean) {
    const route = await routeServer();
    const asked: Array<string | undefined> = [];
    const client = createClient({
      baseUrl: sandbox.url,
      retry: 0,
      tokenProvider: async ({ forceRefresh, rejected }) => {
        asked.push(forceRefresh ? 'forced' + (rejected ? ' rejected=' + rejected : '') : 'plain');
        const query = forceRefresh ? '?force=1' + (passRejected && rejected ? '&rejected=' + rejected : '') : '';
        const r = await fetch(route.url + '/channel-token' + query, { headers: { 'x-user': 'qa-user' } });
        if (!r.ok) throw new Error('token route answered HTTP ' + r.status);
        return ((await r.json()) as { access_token: string }).access_token;
      },
    });
    const failed: string[] = [];
    client.on('auth:failed', ({ error }) => failed.push(error.message));
    const read = () =>
      client.get('/open/api/v1/sdk/orders', { raw: true }).then(
        () => 'ok',
        (e: Error & { code?: string }) => e.code + ': ' + e.message,
      );
    return { route, asked, failed, read, close: route.close };
  }

  test('the README provider passes `rejected` on: both expires end in a fresh token, 0 auth:failed', async () => {
    const { asked, failed, read, close } = await qa(true);
    try {
      expect(await read()).toBe('ok');
      sandbox.expireTokens();
      expect(await read()).toBe('ok');
      sandbox.expireTokens();
      expect(await read()).toBe('ok');
      expect(failed).toEqual([]);
      expect(asked.map((a) => a?.replace(/=\w+/, '=<fingerprint>'))).toEqual(['plain', 'forced rejected=<fingerprint>', 'forced rejected=<fingerprint>']);
    } finally {
      await close();
    }
  });

  test('a provider that does not pass it on: the message names the window that handed the rejected token back, not a missing sign-in', async () => {
    const { read, close } = await qa(false);
    try {
      expect(await read()).toBe('ok');
      sandbox.expireTokens();
      expect(await read()).toBe('ok');
      sandbox.expireTokens();
      const second = await read();
      expect(second).toMatch(/^UNAUTHORIZED: .*the very token just rejected.*forceRefreshWindow.*`rejected`/);
    } finally {
      await close();
    }
  });
});
