// Your project's Redis client, connected: `channel-sandbox inbox` talks to your Redis
// through the ioredis or node-redis your project has installed, resolved from the current
// directory: the package bundles none.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RedisClient } from '../../server/redis-client.js';
import { CliError } from './cli-client.js';

export interface Connected {
  client: RedisClient;
  close(): Promise<void>;
}

/** Your project's ioredis or node-redis, connected to `urls` (several: a Redis Cluster). */
export async function connect(urls: string[], cluster: boolean): Promise<Connected> {
  const require = createRequire(join(process.cwd(), 'package.json'));
  const load = async (name: string) => {
    try {
      return (await import(pathToFileURL(require.resolve(name)).href)) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  };
  const quiet = () => {};
  const io = await load('ioredis');
  if (io) {
    type IoClient = RedisClient & { on(event: string, f: () => void): void; once(event: string, f: (e?: unknown) => void): void; disconnect(): void };
    const { Redis, Cluster } = ((io.default as Record<string, unknown> | undefined)?.Cluster ? io.default : io) as Record<
      string,
      new (...a: unknown[]) => IoClient
    >;
    const client = cluster ? new Cluster(urls.map((u) => ({ host: new URL(u).hostname, port: Number(new URL(u).port) || 6379 }))) : new Redis(urls[0]);
    client.on('error', quiet);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new CliError('inbox: could not connect to Redis at ' + urls.join(', ') + ' within 10 s')), 10_000);
      client.once('ready', () => (clearTimeout(timer), resolve()));
    }).catch((error: unknown) => {
      client.disconnect();
      throw error;
    });
    return { client, close: async () => client.disconnect() };
  }
  const node = await load('redis');
  if (node) {
    type NodeClient = RedisClient & { on(event: string, f: () => void): void; connect(): Promise<unknown>; disconnect(): Promise<void> };
    const create = node as { createClient(o: object): NodeClient; createCluster(o: object): NodeClient };
    const client = cluster ? create.createCluster({ rootNodes: urls.map((url) => ({ url })) }) : create.createClient({ url: urls[0] });
    client.on('error', quiet);
    await client.connect();
    return { client, close: () => client.disconnect() };
  }
  throw new CliError('inbox: no Redis client found from ' + process.cwd() + '; run this in your project (with ioredis or redis installed)', 2);
}
