/**
 * The inbox's slot moved between masters while a push runs (issue #43 item 4, a MOVED during a
 * script): a live Cluster's resharding (CLUSTER SETSLOT MIGRATING / IMPORTING, MIGRATE, SETSLOT
 * NODE, as `redis-cli --cluster reshard` and a managed Cluster's scale-out do it). While the slot
 * migrates, a script that reaches a key it did not declare and that has already moved fails there
 * ("Script attempted to access a non local key"), and Redis keeps what the script wrote before.
 * A failure's script acknowledged and deleted the stream entry, then read the order's lock (moved
 * already), and stopped before parking the push: an acknowledged push gone, without a dead letter,
 * its repeat answered "duplicate".
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisInbox, createWebhookHandler } from '../../src/server-node.js';
import { bodyOf, post, snapshot, sleep, until, webhookSecret } from '../server/webhooks/inbox/inbox-helpers.js';
import { cli, hasCluster, startCluster, type Cluster } from './cluster.mjs';
import { clusterClients } from './cluster-clients.js';

/** The slot of `key` moved from its master to another, in steps: `between` runs while only `first` has moved. */
async function migrate(cluster: Cluster, key: string, first: string[], between: () => Promise<void>) {
  const port = cluster.nodes[0].port;
  const slot = Number(await cli(port, 'cluster', 'keyslot', key));
  const source = (await cluster.masterOf(key))!;
  const target = cluster.nodes.find((n) => n !== source)!;
  const [sourceId, targetId] = await Promise.all([cli(source.port, 'cluster', 'myid'), cli(target.port, 'cluster', 'myid')]);
  const [from, to] = [new Redis(source.port), new Redis(target.port)];
  try {
    await to.call('cluster', 'setslot', String(slot), 'importing', sourceId);
    await from.call('cluster', 'setslot', String(slot), 'migrating', targetId);
    await from.migrate('127.0.0.1', target.port, '', 0, 5000, 'KEYS', ...first);
    await between();
    for (let keys = (await from.call('cluster', 'getkeysinslot', String(slot), '100')) as string[]; keys.length;) {
      await from.migrate('127.0.0.1', target.port, '', 0, 5000, 'KEYS', ...keys);
      keys = (await from.call('cluster', 'getkeysinslot', String(slot), '100')) as string[];
    }
    for (const node of cluster.nodes) await cli(node.port, 'cluster', 'setslot', String(slot), 'node', targetId);
  } finally {
    from.disconnect();
    to.disconnect();
  }
}

describe.runIf(hasCluster)("the inbox's slot migrated to another master while a push runs", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const clients = clusterClients(() => cluster);

  test.each(clients)(
    '%s: a callback that fails while the order lock has moved: the push is not lost; it runs again and succeeds once the slot has moved',
    async (label, open) => {
      const { client, close } = await open();
      const prefix = `mig-${label.split(' ')[0]}:`;
      const inbox = createRedisInbox(client, { prefix, pollMs: 20, leaseMs: 1500, timeoutMs: 500, maxAttempts: 5, retryDelayMs: () => 100 });
      const handler = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {} });
      // A push waiting for a retry and a dead letter, as an inbox in service has: every key the
      // failure's script declares then exists on the master it leaves (else Redis answers TRYAGAIN
      // before the script starts).
      for (const [name, options] of [
        ['dead', { maxAttempts: 1 }],
        ['parked', { retryDelayMs: () => 600_000 }],
      ] as const) {
        const other = createRedisInbox(client, { prefix, pollMs: 20, ...options });
        const failing = other.process({ onError: () => {}, onLogisticsUpdated: () => Promise.reject(new Error('down')) });
        expect(
          (await post(createWebhookHandler({ secret: webhookSecret, inbox: other }), bodyOf(snapshot('SO-' + name, '2024-06-01T12:00:00+08:00')))).status,
        ).toBe(202);
        await until(async () => (await other.stats()).deadLetters + (await other.stats()).retrying === (name === 'dead' ? 1 : 2), name);
        await failing.close();
      }
      const attempts: number[] = [];
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const worker = inbox.process({
        onError: () => {},
        onLogisticsUpdated: async (_event, { attempt }) => {
          attempts.push(attempt);
          if (attempts.length > 1) return;
          started();
          await gate;
          throw new Error('the warehouse API answered 502');
        },
      });
      try {
        const order = 'SO-migrating-' + label.split(' ')[0];
        const body = bodyOf(snapshot(order, '2024-06-01T12:00:00+08:00'));
        expect((await post(handler, body)).status).toBe(202);
        await running;
        const tag = `{${prefix}inbox}`;
        await migrate(cluster, tag + ':stream', [tag + ':order:' + order], async () => {
          release();
          await sleep(300); // the failure is stored (or not) while only the lock has moved
        });
        // Before: the failure's script stopped after deleting the entry: it never ran again and
        // stats() counted it nowhere ({ attempts: [1], pending: 0, processing: 0, retrying: 1 }).
        await until(() => attempts.length === 2, 'the push to run again', 15_000).catch(() => {});
        await until(async () => (await inbox.stats()).processing === 0, 'its outcome stored').catch(() => {});
        const { pending, processing, retrying, deadLetters } = await inbox.stats();
        expect({ attempts, pending, processing, retrying, deadLetters }).toEqual({ attempts: [1, 2], pending: 0, processing: 0, retrying: 1, deadLetters: 1 });
      } finally {
        release();
        await worker.close();
        await close();
      }
    },
    60_000,
  );
});
