// The Redis clients a user may hand to the adapters, each connected the way its README says.
import { Redis as IoRedis6 } from 'ioredis';
import { Redis as IoRedis5 } from 'ioredis-v5';
import { createClient as createClient6 } from 'redis';
import { createClient as createClient4 } from 'redis-v4';
import { createClient as createClient5 } from 'redis-v5';
import type { RedisClient } from '../../../src/server-node.js';

export interface ConnectedClient {
  client: RedisClient;
  /** The raw client, for the test's own commands. */
  raw: { get(key: string): Promise<unknown>; pttl(key: string): Promise<number>; keys(pattern: string): Promise<string[]>; flushall(): Promise<unknown> };
  close(): Promise<void>;
}

export interface ClientKind {
  name: string;
  connect(url: string): Promise<ConnectedClient>;
}

const ignore = () => {};

function ioredis(name: string, create: (url: string) => IoRedis6 | IoRedis5): ClientKind {
  return {
    name,
    async connect(url) {
      const client = create(url);
      client.on('error', ignore); // the tests stop Redis on purpose; ioredis would print each reconnect failure
      await new Promise<void>((resolve, reject) => {
        client.once('ready', resolve);
        client.once('end', () => reject(new Error('ioredis could not connect to ' + url)));
      });
      return {
        client,
        raw: { get: (k) => client.get(k), pttl: (k) => client.pttl(k), keys: (p) => client.keys(p), flushall: () => client.flushall() },
        close: async () => client.disconnect(),
      };
    },
  };
}

type NodeRedis = ReturnType<typeof createClient6> | ReturnType<typeof createClient5> | ReturnType<typeof createClient4>;

function nodeRedis(name: string, create: (options: { url: string }) => NodeRedis): ClientKind {
  return {
    name,
    async connect(url) {
      const client = create({ url });
      client.on('error', ignore); // node-redis throws on an unheard 'error' (a stopped Redis emits them)
      await client.connect();
      const c = client as unknown as {
        get(k: string): Promise<unknown>;
        pTTL(k: string): Promise<number>;
        keys(p: string): Promise<string[]>;
        flushAll(): Promise<unknown>;
        destroy?(): void;
        disconnect(): Promise<void>;
      };
      return {
        client,
        raw: { get: (k) => c.get(k), pttl: (k) => c.pTTL(k), keys: (p) => c.keys(p), flushall: () => c.flushAll() },
        async close() {
          if (typeof c.destroy === 'function') c.destroy();
          else if (client.isOpen) await c.disconnect();
        },
      };
    },
  };
}

export const clientKinds: ClientKind[] = [
  ioredis('ioredis 6', (url) => new IoRedis6(url)),
  ioredis('ioredis 5', (url) => new IoRedis5(url)),
  nodeRedis('node-redis 6', createClient6),
  nodeRedis('node-redis 5', createClient5),
  nodeRedis('node-redis 4', createClient4),
];
