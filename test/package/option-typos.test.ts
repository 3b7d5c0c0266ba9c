/**
 * Every public constructor checks its options one way (issue #24): an unknown key is a
 * ConfigError that names the key and the option it was probably meant to be, never a typo that
 * silently turns a limit off. Runs the built package by its name, each entry as users load it
 * (ESM and CommonJS; the server on node:crypto and on Web Crypto), so the table holds whatever
 * the sources look like. Needs `npm run build` first (npm test does it).
 */
import { createRequire } from 'node:module';
import { describe, expect, test } from 'vitest';

const require = createRequire(import.meta.url);
const webBuild: string = new URL('../../dist/server.js', import.meta.url).href;

/** A Redis client that is never called: the constructors only check their arguments. */
const idleRedis = { status: 'ready', set: async () => null, get: async () => null, del: async () => 0, eval: async () => null };
const storage = { getStorageSync: () => '', setStorageSync: () => undefined, removeStorageSync: () => undefined };
const okExchange = { getToken: async () => ({ accessToken: 'x', expiresIn: 900, tokenType: 'Bearer', expiresAt: 0 }) };

type Make = (typo: Record<string, unknown>) => unknown;

/** [entry, constructor, what it is called with, the typo, the key it should suggest]. */
const table: Array<[string, string, (m: Record<string, (...args: unknown[]) => unknown>) => Make, string, string]> = [
  ['server', 'createWebhookHandler', (m) => (t) => m.createWebhookHandler({ secret: 's', onLogisticsUpdated: () => {}, ...t }), 'maxBodySize', 'maxBodyBytes'],
  ['server', 'createWebhookHandler', (m) => (t) => m.createWebhookHandler({ secret: 's', onLogisticsUpdated: () => {}, ...t }), 'bodyTimeout', 'bodyTimeoutMs'],
  [
    'server',
    'createWebhookHandler',
    (m) => (t) => m.createWebhookHandler({ secret: 's', onLogisticsUpdated: () => {}, ...t }),
    'onLogisticUpdated',
    'onLogisticsUpdated',
  ],
  [
    'server',
    'createTokenExchange',
    (m) => (t) => m.createTokenExchange({ baseUrl: 'https://channel.example.com', accessKey: 'ak', secretKey: 'sk', ...t }),
    'cacheTimout',
    'cacheTimeout',
  ],
  [
    'server',
    'createTokenExchange',
    (m) => (t) => m.createTokenExchange({ baseUrl: 'https://channel.example.com', accessKey: 'ak', secretKey: 'sk', ...t }),
    'secretkey',
    'secretKey',
  ],
  ['server', 'createTokenRoute', (m) => (t) => m.createTokenRoute({ exchange: okExchange, resolveUser: () => 'u1', ...t }), 'resolveUsr', 'resolveUser'],
  ['server', 'createTokenRoute', (m) => (t) => m.createTokenRoute({ exchange: okExchange, resolveUser: () => 'u1', ...t }), 'allowedOrigin', 'allowedOrigins'],
  ['server', 'createMemoryDedupStore', (m) => (t) => m.createMemoryDedupStore({ ...t }), 'ttlSecond', 'ttlSeconds'],
  ['server', 'createRedisDedupStore', (m) => (t) => m.createRedisDedupStore(idleRedis, { ...t }), 'prefx', 'prefix'],
  ['server', 'createRedisTokenCache', (m) => (t) => m.createRedisTokenCache(idleRedis, { ...t }), 'prefx', 'prefix'],
  ['server', 'createRedisTokenCache', (m) => (t) => m.createRedisTokenCache(idleRedis, { ...t }), 'keyPrefix', 'prefix'],
  ['testing', 'startSandbox', (m) => (t) => m.startSandbox({ ...t }), 'tokenTtl', 'tokenTtlSeconds'],
  [
    'testing',
    'checkTokenRoute',
    (m) => (t) => m.checkTokenRoute({ url: 'http://127.0.0.1:9/token', sandbox: 'http://127.0.0.1:9', ...t }),
    'header',
    'headers',
  ],
  ['testing', 'checkWebhook', (m) => (t) => m.checkWebhook({ url: 'http://127.0.0.1:9/hook', secret: 's', ...t }), 'secrets', 'secret'],
  ['miniprogram', 'hostTokenStore', (m) => (t) => m.hostTokenStore({ key: () => 'u1', storage, ...t }), 'storge', 'storage'],
  [
    'miniprogram',
    'createClient',
    (m) => (t) => m.createClient({ baseUrl: 'https://channel.example.com', tokenProvider: async () => 'x', request: () => ({}), ...t }),
    'tokenTimout',
    'tokenTimeout',
  ],
  [
    'browser',
    'createClient',
    (m) => (t) => m.createClient({ baseUrl: 'https://channel.example.com', tokenProvider: async () => 'x', ...t }),
    'retries',
    'retry',
  ],
];

const builds: Record<string, Array<[string, () => Promise<Record<string, (...args: unknown[]) => unknown>>]>> = {
  server: [
    ['ESM, node:crypto', () => import('channel-sdk/server')],
    ['CommonJS, node:crypto', async () => require('channel-sdk/server')],
    // By path: the edge build is what non-Node runtimes get (the default condition); typecheck runs before the build.
    ['ESM, Web Crypto (dist/server.js)', () => import(webBuild)],
  ],
  testing: [
    ['ESM', () => import('channel-sdk/testing')],
    ['CommonJS', async () => require('channel-sdk/testing')],
  ],
  miniprogram: [
    ['ESM', () => import('channel-sdk/miniprogram')],
    ['CommonJS', async () => require('channel-sdk/miniprogram')],
  ],
  browser: [
    ['ESM', () => import('channel-sdk')],
    ['CommonJS', async () => require('channel-sdk')],
  ],
};

/** Calls `make`, awaiting a promise it returns; the ConfigError it throws or rejects with. */
async function configErrorOf(make: () => unknown): Promise<{ name?: string; code?: string; message: string } | undefined> {
  try {
    const made = make();
    const value = made && typeof (made as PromiseLike<unknown>).then === 'function' ? await made : made;
    // A sandbox that did start is stopped (a missed typo must not leave a server running).
    await (value as { close?: () => Promise<void> } | undefined)?.close?.();
    return undefined;
  } catch (error) {
    return error as { name?: string; code?: string; message: string };
  }
}

describe.each(table)('%s %s', (entry, _name, call, typo, meant) => {
  test.each(builds[entry])(`{ ${typo} } is a ConfigError naming it and "${meant}" (%s)`, async (_build, load) => {
    const module = await load();
    const make = call(module);
    // Without the typo no key is refused: the table tests the key, not a missing option (the
    // checks then fail to reach their made-up addresses, which is not the point here).
    const control = await configErrorOf(() => make({}));
    expect(control?.message ?? '').not.toMatch(/unknown .*option/);
    const error = await configErrorOf(() => make({ [typo]: 1 }));
    expect(error?.name).toBe('ConfigError');
    expect(error?.code).toBe('CONFIG_ERROR');
    expect(error?.message).toContain('"' + typo + '"');
    expect(error?.message).toContain('did you mean "' + meant + '"');
  });
});
