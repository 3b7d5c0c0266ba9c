// An ioredis `Cluster` and a node-redis `createCluster` client, connected to a test cluster, as a
// partner's app holds them: for the tests that run the inbox in process on each.
import { Cluster as IoCluster } from 'ioredis';
import { createCluster } from 'redis';
import type { RedisClient } from '../../src/server-node.js';
import type { Cluster } from './cluster.mjs';

export type Connect = () => Promise<{ client: RedisClient; close(): Promise<void> }>;

/** [label, connect] pairs; `cluster()` gives the cluster once it has started. */
export function clusterClients(cluster: () => Cluster): ReadonlyArray<readonly [string, Connect]> {
  return [
    [
      'ioredis 6 Cluster',
      async () => {
        const io = new IoCluster(cluster().urls.map((url) => ({ host: '127.0.0.1', port: Number(new URL(url).port) })));
        io.on('error', () => {});
        await new Promise((resolve) => io.once('ready', resolve));
        return { client: io as RedisClient, close: async () => void io.disconnect() };
      },
    ],
    [
      'node-redis 6 createCluster',
      async () => {
        const node = createCluster({ rootNodes: cluster().urls.map((url) => ({ url })) });
        node.on('error', () => {});
        await node.connect();
        return { client: node as unknown as RedisClient, close: () => node.close() };
      },
    ],
  ];
}
