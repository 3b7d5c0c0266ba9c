import { afterEach, expect, test } from 'vitest';
import { ConfigError, createTokenExchange, TokenExchangeError, type TokenCache } from '../../../src/server-node.js';
import { makeJwt } from '../../helpers/fake-service.js';
import { sendJson, startServer, type TestServer } from '../../helpers/server.js';
import { accessKey, endpoint, secretKey } from './token-endpoint.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

test('POST /open/api/v1/sdk/tokens with the four X-Channel-* headers and the reference signature', async () => {
  const service = await endpoint();
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey });
  const token = await exchange.getToken('user-1');
  expect(service.calls).toEqual([{ user: 'user-1', reason: undefined }]);
  expect(token.tokenType).toBe('Bearer');
  expect(token.expiresIn).toBe(900);
  expect(token.accessToken.split('.')).toHaveLength(3);
  expect(token.expiresAt).toBeGreaterThan(Date.now() + 899_000);
});

test('a wrong secret key is refused by the endpoint: TokenExchangeError with status and apiCode, no secret in it', async () => {
  const service = await endpoint();
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey: 'wrong-secret-value' });
  const error = (await exchange.getToken('user-1').catch((e: unknown) => e)) as TokenExchangeError;
  expect(error).toBeInstanceOf(TokenExchangeError);
  expect(error.status).toBe(401);
  expect(error.apiCode).toBe(40101);
  expect(error.message).toMatch(/HTTP 401 with code 40101: signature mismatch/);
  expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).not.toContain('wrong-secret-value');
});

test('externalUserId: not a string, empty or over 128 characters (code points) is refused before any call', async () => {
  const service = await endpoint();
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey });
  await expect(exchange.getToken('' as string)).rejects.toThrow(/must not be empty/);
  await expect(exchange.getToken(42 as unknown as string)).rejects.toThrow(/must be a string/);
  await expect(exchange.getToken('a'.repeat(129))).rejects.toThrow(/129 characters; the service allows at most 128/);
  await expect(exchange.getToken('😀'.repeat(129))).rejects.toBeInstanceOf(ConfigError);
  expect(service.calls).toHaveLength(0);
  await expect(exchange.getToken('a'.repeat(128))).resolves.toBeTruthy();
  await expect(exchange.getToken('😀'.repeat(128))).resolves.toBeTruthy(); // 256 UTF-16 units, 128 characters
  await expect(exchange.getToken('用户'.repeat(64))).resolves.toBeTruthy();
  expect(service.calls).toHaveLength(3);
});

test('caches per user; concurrent calls for one user share one request; forceRefresh reaches the service', async () => {
  const service = await endpoint({ delayMs: 30 });
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey });
  const [a, b, c] = await Promise.all([exchange.getToken('u1'), exchange.getToken('u1'), exchange.getToken('u2')]);
  expect(a).toEqual(b);
  expect(c.accessToken).not.toBe(a.accessToken);
  expect(service.calls.map((x) => x.user)).toEqual(['u1', 'u2']);
  expect(await exchange.getToken('u1')).toEqual(a);
  expect(service.calls).toHaveLength(2);
  const forced = await exchange.getToken('u1', { forceRefresh: true });
  expect(forced.accessToken).not.toBe(a.accessToken);
  expect(service.calls).toHaveLength(3);
  expect(await exchange.getToken('u1')).toEqual(forced);
});

test('a cached token within cacheMargin of expiry is not handed out', async () => {
  const service = await endpoint();
  const store = new Map([
    [`${service.url.replace(/:/g, '%3A')}:${accessKey}:u1`, { accessToken: makeJwt({}), expiresIn: 900, tokenType: 'Bearer', expiresAt: Date.now() + 59_000 }],
  ]);
  const cache: TokenCache = { get: (key) => store.get(key) as never, set: (key, value) => void store.set(key, value as never) };
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, cacheMargin: 60, cache });
  const fresh = await exchange.getToken('u1');
  expect(service.calls).toHaveLength(1);
  expect(fresh.expiresAt).toBeGreaterThan(Date.now() + 890_000);
});

test('a pluggable cache store (e.g. Redis) is used with a TTL', async () => {
  const service = await endpoint();
  const store = new Map<string, unknown>();
  const ttls: number[] = [];
  const cache: TokenCache = {
    get: async (key) => store.get(key) as never,
    set: async (key, value, ttlMs) => {
      store.set(key, value);
      ttls.push(ttlMs);
    },
  };
  const first = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, cache });
  const second = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, cache });
  const token = await first.getToken('shared');
  expect(await second.getToken('shared')).toEqual(token);
  expect(service.calls).toHaveLength(1);
  expect([...store.keys()]).toEqual([`${service.url.replace(/:/g, '%3A')}:ak_test:shared`]);
  expect(ttls[0]).toBeGreaterThan(830_000);
  expect(ttls[0]).toBeLessThanOrEqual(840_000);
});

test('the default memory cache is bounded (LRU)', async () => {
  const { createMemoryTokenCache } = await import('../../../src/server-node.js');
  const cache = createMemoryTokenCache(2);
  const value = { accessToken: 'x', expiresIn: 900, tokenType: 'Bearer' as const, expiresAt: Date.now() + 900_000 };
  cache.set('a', value, 1000);
  cache.set('b', value, 1000);
  cache.get('a');
  cache.set('c', value, 1000);
  expect(cache.get('b')).toBeUndefined();
  expect(cache.get('a')).toBe(value);
  expect(cache.get('c')).toBe(value);
});

test.each([
  ['non-zero code', [200, { code: 10086, message: 'user is a console account' }], /code 10086: user is a console account/],
  ['HTTP 500', [500, 'oops'], /HTTP 500/],
  ['token_type not Bearer', [200, { code: 0, data: { access_token: 'a.b.c', expires_in: 900, token_type: 'MAC' } }], /data\.token_type/],
  ['missing access_token', [200, { code: 0, data: { expires_in: 900, token_type: 'Bearer' } }], /data\.access_token: expected string/],
  ['expires_in a string', [200, { code: 0, data: { access_token: 'a.b.c', expires_in: '900', token_type: 'Bearer' } }], /data\.expires_in: expected number/],
] as const)('%s -> TokenExchangeError', async (_label, answer, message) => {
  const service = await endpoint({ answer: () => answer as [number, unknown] });
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey });
  const error = await exchange.getToken('u').catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TokenExchangeError);
  expect((error as Error).message).toMatch(message);
  expect((error as Error).message).not.toContain(secretKey);
});

test('timeout and unreachable endpoint -> TokenExchangeError; the next call tries again', async () => {
  const service = await endpoint({ delayMs: 300 });
  const slow = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, timeout: 50 });
  await expect(slow.getToken('u')).rejects.toThrow(/did not answer within 50 ms/);
  const down = createTokenExchange({ baseUrl: 'http://127.0.0.1:9', accessKey, secretKey });
  await expect(down.getToken('u')).rejects.toThrow(/could not reach the token endpoint/);
  const fine = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, timeout: 2000 });
  await expect(fine.getToken('u')).resolves.toBeTruthy();
});

test('a custom sign function replaces the reference scheme', async () => {
  const seen: string[] = [];
  const server = await startServer((req, res) => {
    seen.push(String(req.headers['x-channel-signature']));
    sendJson(res, 200, { code: 0, data: { access_token: makeJwt({}), expires_in: 900, token_type: 'Bearer' } });
  });
  servers.push(server);
  const exchange = createTokenExchange({
    baseUrl: server.url,
    accessKey,
    secretKey,
    sign: ({ body, path }) => ({
      'X-Channel-Key': accessKey,
      'X-Channel-Timestamp': '1',
      'X-Channel-Nonce': 'n',
      'X-Channel-Signature': `custom:${path}:${body}`,
    }),
  });
  await exchange.getToken('u9');
  expect(seen).toEqual(['custom:/open/api/v1/sdk/tokens:{"external_user_id":"u9"}']);
});

test('bad options -> ConfigError naming the option', () => {
  expect(() => createTokenExchange({ baseUrl: 'channel.example.com', accessKey, secretKey })).toThrow(/baseUrl must be an absolute http\(s\) URL/);
  expect(() => createTokenExchange({ baseUrl: 'https://c.example', accessKey: '', secretKey })).toThrow(/accessKey/);
  expect(() => createTokenExchange({ baseUrl: 'https://c.example', accessKey, secretKey: '' })).toThrow(/secretKey/);
});
