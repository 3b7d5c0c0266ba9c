/**
 * One Redis key per user (#30.1): ids that differ only in a lone surrogate or U+FFFD are distinct
 * users to the service, but ioredis and node-redis encode each lone surrogate as U+FFFD's three
 * bytes, so they shared one key and the second user was handed the first one's token. Ill-formed
 * ids are refused before any cache or token call; every well-formed id gets its own token.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError, createRedisTokenCache, createTokenExchange } from '../../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.js';
import { clientKinds, type ConnectedClient } from './clients.js';

describe.runIf(hasRedis).each(clientKinds)('$name', (kind) => {
  let redis: RedisServer;
  let sandbox: Sandbox;
  let client: ConnectedClient;
  beforeAll(async () => {
    [redis, sandbox] = await Promise.all([startRedis(), startSandbox()]);
    client = await kind.connect(redis.url);
  });
  afterAll(async () => {
    await client?.close();
    await Promise.all([redis?.stop(), sandbox?.close()]);
  });

  test("'user-\\ud800', 'user-\\udbff' (lone surrogates) are refused with ConfigError before any call; 'user-\\ufffd' and 'user-\\ud83d\\ude00' each get a token of their own", async () => {
    const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials, cache: createRedisTokenCache(client.client) });
    const calls = sandbox.stats.tokenCalls;
    const outcomes: Array<[string, string]> = [];
    for (const id of ['user-\ud800', 'user-\udbff', 'user-\ufffd', 'user-\udc00x', 'user-\ud83d\ude00']) {
      try {
        const token = await exchange.getToken(id);
        const claims = sandbox.verifyToken(token.accessToken).claims;
        outcomes.push([escape(id), claims?.sub === id ? 'own token' : 'the token of ' + escape(String(claims?.sub))]);
      } catch (error) {
        outcomes.push([escape(id), error instanceof ConfigError && /lone surrogate/.test(error.message) ? 'ConfigError: lone surrogate' : String(error)]);
      }
    }
    expect(outcomes).toEqual([
      ['user-%uD800', 'ConfigError: lone surrogate'],
      ['user-%uDBFF', 'ConfigError: lone surrogate'],
      ['user-%uFFFD', 'own token'],
      ['user-%uDC00x', 'ConfigError: lone surrogate'],
      ['user-%uD83D%uDE00', 'own token'],
    ]);
    expect(sandbox.stats.tokenCalls - calls).toBe(2);
    // Two keys, one per well-formed user (stored in the background).
    await expect.poll(async () => (await client.raw.keys('channel-sdk:token:*')).length).toBe(2);
  });
});
