import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, test } from 'vitest';
import { ConfigError, createTokenRoute, TokenExchangeError, toNodeHandler, type TokenRouteErrorInfo, type TokenSource } from '../../../src/server-node.js';
import { collectStrings } from '../../helpers/scan.js';
import { doors } from '../http/doors.js';
import { captureConsole } from '../helpers.js';

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEifQ.c2VjcmV0LXNpZ25hdHVyZQ';

function setup(options: { user?: unknown; fail?: unknown } = {}) {
  const calls: Array<[string, boolean]> = [];
  const reported: Array<[unknown, TokenRouteErrorInfo]> = [];
  const exchange: TokenSource = {
    async getToken(externalUserId, { forceRefresh }) {
      calls.push([externalUserId, forceRefresh]);
      if (options.fail) throw options.fail;
      return { accessToken: TOKEN, expiresIn: 900, expiresAt: Date.now() + 600_500 };
    },
  };
  const route = createTokenRoute({
    exchange,
    resolveUser: () => ('user' in options ? (options.user as string) : 'user-1'),
    onError: (error, info) => void reported.push([error, info]),
  });
  return { route, calls, reported };
}

describe.each(doors)('token route through %s', (_door, open) => {
  test('GET -> { access_token, token_type, expires_in } for the signed-in user, not cacheable', async () => {
    const { route, calls } = setup();
    const door = await open(route);
    const answer = await door.send({ method: 'GET', path: '/channel-token' });
    await door.close();
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ access_token: TOKEN, token_type: 'Bearer', expires_in: 600 });
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(calls).toEqual([['user-1', false]]);
  });

  test.each([
    ['GET ?force=1', { method: 'GET', path: '/t?force=1' }, true],
    ['GET ?force=true&x=1', { method: 'GET', path: '/t?force=true&x=1' }, true],
    ['GET ?force=0', { method: 'GET', path: '/t?force=0' }, false],
    ['POST {"forceRefresh":true}', { method: 'POST', path: '/t', headers: { 'content-type': 'application/json' }, body: '{"forceRefresh":true}' }, true],
    [
      'POST {"forceRefresh":false}',
      { method: 'POST', path: '/t', headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"forceRefresh":false}' },
      false,
    ],
    ['POST without a body', { method: 'POST', path: '/t' }, false],
  ])('%s -> forceRefresh %s', async (_label, sent, force) => {
    const { route, calls } = setup();
    const door = await open(route);
    expect((await door.send(sent)).status).toBe(200);
    await door.close();
    expect(calls).toEqual([['user-1', force]]);
  });

  test.each([
    ['nobody signed in (null)', { user: null }, 401, { error: 'not signed in' }, []],
    ['nobody signed in (undefined)', { user: undefined }, 401, { error: 'not signed in' }, []],
    [
      'exchange failed',
      { fail: new TokenExchangeError('the token endpoint answered HTTP 401 with code 40101', { status: 401 }) },
      502,
      { error: 'could not get a token from the Channel service' },
      ['exchange'],
    ],
    [
      'user id refused by the exchange',
      { fail: new ConfigError('externalUserId is 129 characters') },
      500,
      { error: 'could not ask for a token for this user; see the server log' },
      ['exchange'],
    ],
  ])('%s -> %i', async (_label, options, status, json, stages) => {
    const { route, reported } = setup(options);
    const door = await open(route);
    const answer = await door.send({ method: 'GET', path: '/channel-token' });
    await door.close();
    expect([answer.status, answer.json]).toEqual([status, json]);
    expect(reported.map(([, info]) => info.stage)).toEqual(stages);
  });

  test('PUT -> 405 naming GET and POST; a POST body that is not JSON -> 400', async () => {
    const { route, calls } = setup();
    const door = await open(route);
    const put = await door.send({ method: 'PUT', path: '/t', body: '{}' });
    const bad = await door.send({ method: 'POST', path: '/t', headers: { 'content-type': 'application/json' }, body: '{"forceRefresh":' });
    await door.close();
    expect([put.status, put.headers.allow, bad.status]).toEqual([405, 'GET, POST', 400]);
    expect(calls).toEqual([]);
  });
});

describe('createTokenRoute', () => {
  test('the token is in no error, report or console line, whatever fails', async () => {
    const output = captureConsole();
    const reports: unknown[] = [];
    try {
      for (const fail of [new TokenExchangeError('boom'), new Error('boom')]) {
        const route = createTokenRoute({
          exchange: { getToken: async () => Promise.reject(fail) },
          resolveUser: () => 'user-1',
        });
        await route(new Request('http://partner.example/channel-token'));
      }
      const { route, reported } = setup();
      const response = await route(new Request('http://partner.example/channel-token'));
      expect(((await response.json()) as { access_token: string }).access_token).toBe(TOKEN);
      reports.push(...reported);
    } finally {
      output.restore();
    }
    expect(output.lines).toHaveLength(2); // one console.error line per failed exchange
    expect(collectStrings([output.lines, reports]).join('\n')).not.toContain(TOKEN);
  });

  test('resolveUser receives what the framework handed over, and may answer a number', async () => {
    const seen: unknown[] = [];
    const app = express();
    app.use(express.json());
    const calls: string[] = [];
    app.post(
      '/channel-token',
      (req, _res, next) => {
        (req as typeof req & { user: { id: number } }).user = { id: 42 };
        next();
      },
      toNodeHandler(
        createTokenRoute({
          exchange: { getToken: async (id, { forceRefresh }) => (calls.push(id + ':' + forceRefresh), { accessToken: TOKEN, expiresIn: 900 }) },
          resolveUser: (req: express.Request & { user?: { id: number } }) => (seen.push(req), req.user?.id),
        }),
      ),
    );
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/channel-token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"forceRefresh":true}',
      });
      expect(await response.json()).toEqual({ access_token: TOKEN, token_type: 'Bearer', expires_in: 900 });
    } finally {
      await new Promise((r) => server.close(r));
    }
    // The body express.json() parsed is used; the user id is sent as a string.
    expect(calls).toEqual(['42:true']);
    expect((seen[0] as { originalUrl: string }).originalUrl).toBe('/channel-token');
  });

  test('an exchange given as a function is created once, at the first request; a throwing one is tried again', async () => {
    let created = 0;
    const route = createTokenRoute({
      exchange: () => {
        if (++created === 1) throw new ConfigError('accessKey must be the non-empty access key');
        return { getToken: async () => ({ accessToken: TOKEN, expiresIn: 900 }) };
      },
      resolveUser: () => 'user-1',
      onError: () => {},
    });
    expect(created).toBe(0);
    expect((await route(new Request('http://partner.example/t'))).status).toBe(500);
    expect((await route(new Request('http://partner.example/t'))).status).toBe(200);
    expect((await route(new Request('http://partner.example/t'))).status).toBe(200);
    expect(created).toBe(2);
  });

  test('resolveUser throwing -> 500, reported', async () => {
    const reported: TokenRouteErrorInfo[] = [];
    const route = createTokenRoute({
      exchange: { getToken: async () => ({ accessToken: TOKEN, expiresIn: 900 }) },
      resolveUser: () => {
        throw new Error('session store down');
      },
      onError: (_error, info) => void reported.push(info),
    });
    expect((await route(new Request('http://partner.example/t'))).status).toBe(500);
    expect(reported).toEqual([{ stage: 'user', status: 500 }]);
  });

  test('an onError that throws changes no answer', async () => {
    const route = createTokenRoute({
      exchange: { getToken: async () => Promise.reject(new TokenExchangeError('down')) },
      resolveUser: () => 'user-1',
      onError: () => {
        throw new Error('reporter bug');
      },
    });
    expect((await route(new Request('http://partner.example/t'))).status).toBe(502);
  });

  test('refuses a missing exchange or resolveUser', () => {
    expect(() => createTokenRoute({ resolveUser: () => 'x' } as never)).toThrow(/needs exchange: createTokenExchange/);
    expect(() => createTokenRoute({ exchange: { getToken: async () => ({ accessToken: '', expiresIn: 1 }) } } as never)).toThrow(/needs resolveUser/);
  });
});
