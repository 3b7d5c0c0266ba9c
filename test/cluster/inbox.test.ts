/**
 * The webhook inbox on a real Redis Cluster (issue #33): 3 masters, each with a replica
 * (cluster.mjs), receivers and workers in separate processes (test/server/webhooks/inbox/inbox-instance.mjs
 * over the built package) on ioredis `Cluster` and node-redis `createCluster`:
 * - every client: pushes from the sandbox stored once, run once, every inbox key in one hash slot;
 * - the master holding the inbox SIGKILLed mid-run: its replica takes over; every push the
 *   receivers acknowledged is processed (0 lost), the sender redelivering what got non-2xx;
 * - prefixes whose keys fall in different slots are refused; prefixes with a hash tag of their own work.
 */
import { Cluster as IoCluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError, createRedisInbox, createWebhookHandler } from '../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../src/testing.js';
import { bodyOf, post, snapshot, sleep, until, webhookSecret as pushSecret } from '../server/webhooks/inbox/inbox-helpers.js';
import { byKeyOf, startInboxProcess, type InboxProcess } from '../server/webhooks/inbox/inbox-processes.mjs';
import { cli, hasCluster, startCluster, type Cluster } from './cluster.mjs';
import { clusterClients } from './cluster-clients.js';

const webhookSecret = 'whsec_cluster_inbox';
const inboxOptions = { pollMs: 20, leaseMs: 1500, timeoutMs: 500 };
const clients = [
  ['ioredis 6 Cluster', 'ioredis'],
  ['ioredis 5 Cluster', 'ioredis-v5'],
  ['node-redis 6 createCluster', 'redis'],
  ['node-redis 5 createCluster', 'redis-v5'],
  ['node-redis 4 createCluster', 'redis-v4'],
] as const;

/** Pushes `logistics` through the sandbox to `url` until a 2xx, as the service would redeliver. */
async function deliver(sandbox: Sandbox, url: string, order: string): Promise<number> {
  for (let tries = 1; ; tries++) {
    const result = await sandbox.pushLogistics(snapshot(order, '2024-06-01T12:00:00+08:00'), { url });
    if (result.ok) return tries;
    if (tries > 200) throw new Error(order + ' was never acknowledged: ' + result.status + ' ' + result.error);
    await sleep(100);
  }
}

describe.runIf(hasCluster)('the inbox on a 3-master Redis Cluster with replicas', () => {
  let cluster: Cluster;
  let sandbox: Sandbox;
  beforeAll(async () => {
    [cluster, sandbox] = await Promise.all([startCluster({ replicas: 1 }), startSandbox({ webhookSecret })]);
  });
  afterAll(async () => {
    await Promise.all([cluster?.stop(), sandbox?.close()]);
  });

  test.each(clients)('%s: pushes stored once, run once; every inbox key in one hash slot', async (_label, client) => {
    const prefix = `cl-inbox-${client}:`;
    const base = { client, clusterNodes: cluster.urls, prefix, inboxOptions, logTo: 'ipc' as const };
    const processes: InboxProcess[] = [];
    try {
      const receiver = await startInboxProcess({ ...base, serve: webhookSecret });
      const worker = await startInboxProcess({ ...base, work: { concurrency: 4 } });
      processes.push(receiver, worker);
      for (let i = 0; i < 10; i++) {
        const logistics = snapshot('SO-cl-' + i, '2024-06-01T12:00:00+08:00');
        expect((await sandbox.pushLogistics(logistics, { url: receiver.url! })).status).toBe(202);
        expect((await sandbox.pushLogistics(logistics, { url: receiver.url! })).status).toBe(200);
      }
      await until(() => worker.lines.filter((l) => l.phase === 'end').length === 10, '10 runs');
      await sleep(100);
      expect([...byKeyOf(worker.lines).byKey.values()].map((runs) => runs.starts.length)).toEqual(Array(10).fill(1));
      const keys = (await Promise.all(cluster.nodes.map((n) => cli(n.port, '--scan', '--pattern', `*${prefix}inbox*`)))).flatMap((out) =>
        out.split('\n').filter(Boolean),
      );
      expect(keys.length).toBeGreaterThan(10);
      const slots = new Set(await Promise.all(keys.map((key) => cli(cluster.nodes[0].port, 'cluster', 'keyslot', key))));
      expect(slots.size).toBe(1);
    } finally {
      await Promise.all(processes.map((p) => p.close()));
    }
  });

  describe('prefixes (issue #43 item 6)', () => {
    test.each(['{}', 'a{', 'x}{y:', '}'])(
      '%j: the keys it gave fall in different slots of the Cluster (each push answered 503, CROSSSLOT); createRedisInbox refuses it',
      async (prefix) => {
        // The tag these prefixes gave before they were refused.
        const tag = prefix.includes('{') ? prefix + 'inbox' : '{' + prefix + 'inbox}';
        const keys = [tag + ':stream', tag + ':push:' + 'a'.repeat(64), tag + ':retry', tag + ':parked'];
        const slots = new Set(await Promise.all(keys.map((key) => cli(cluster.nodes[0].port, 'cluster', 'keyslot', key))));
        expect(slots.size).toBeGreaterThan(1);
        const io = new IoCluster([{ host: '127.0.0.1', port: cluster.nodes[0].port }], { lazyConnect: true });
        expect(() => createRedisInbox(io, { prefix })).toThrow(ConfigError);
        expect(() => createRedisInbox(io, { prefix })).toThrow(/every push would be answered 503 \(CROSSSLOT\)/);
        io.disconnect();
      },
    );

    test('an ioredis Cluster with keyPrefix: pause() holds the workers, every key the inbox touched starts with the keyPrefix and shares one slot', async () => {
      const nodes = [{ host: '127.0.0.1', port: cluster.nodes[0].port }];
      const io = new IoCluster(nodes, { keyPrefix: 'cl-app:' });
      const worker = { close: async () => {} };
      try {
        const inbox = createRedisInbox(io, { ...inboxOptions, prefix: 'cl-kp:' });
        const handler = createWebhookHandler({ secret: pushSecret, inbox, onError: () => {} });
        const runs: string[] = [];
        await inbox.pause();
        worker.close = inbox.process({ concurrency: 2, onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no) }).close;
        for (let i = 0; i < 3; i++) expect((await post(handler, bodyOf(snapshot('SO-cl-kp-' + i, '2024-06-01T12:00:00+08:00')))).status).toBe(202);
        await sleep(400);
        expect(runs).toEqual([]);
        expect(await inbox.stats()).toMatchObject({ pending: 3, paused: true });
        await inbox.resume();
        await until(() => runs.length === 3, 'three runs after resume');
        // Every node, replicas included (they hold the same names).
        const keys = (await Promise.all(cluster.nodes.map((node) => cli(node.port, 'keys', '*cl-kp:*')))).flatMap((out) => out.split('\n').filter(Boolean));
        expect(keys.length).toBeGreaterThan(0);
        expect(keys.filter((key) => !key.startsWith('cl-app:{cl-kp:inbox}:'))).toEqual([]);
        expect(new Set(await Promise.all(keys.map((key) => cli(cluster.nodes[0].port, 'cluster', 'keyslot', key)))).size).toBe(1);
      } finally {
        await worker.close();
        io.disconnect();
      }
    });

    const connections = clusterClients(() => cluster);
    test.each(connections)('%s: prefixes with a hash tag of their own ("{app}:", "a}b:", "{t}{u}:") store and run pushes', async (label, open) => {
      const { client, close } = await open();
      const workers: Array<{ close(): Promise<void> }> = [];
      try {
        for (const prefix of ['{app}:', 'a}b:', '{t}{u}:']) {
          const inbox = createRedisInbox(client, { ...inboxOptions, prefix });
          const handler = createWebhookHandler({ secret: pushSecret, inbox, onError: () => {} });
          const runs: string[] = [];
          workers.push(inbox.process({ concurrency: 2, onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no) }));
          for (let i = 0; i < 3; i++) expect((await post(handler, bodyOf(snapshot(prefix + label + i, '2024-06-01T12:00:00+08:00')))).status).toBe(202);
          await until(() => runs.length === 3, prefix + ': three runs');
          expect(await inbox.stats()).toMatchObject({ pending: 0, processing: 0, retrying: 0, deadLetters: 0 });
        }
      } finally {
        await Promise.all(workers.map((worker) => worker.close()));
        await close();
      }
    });
  });

  // Each on a cluster of its own: after a failover, the promoted master has no replica left.
  describe.each([clients[0], clients[2]])('%s', (_label, client) => {
    let own: Cluster;
    beforeAll(async () => {
      own = await startCluster({ replicas: 1 });
    });
    afterAll(async () => {
      await own?.stop();
    });

    test('the master holding the inbox SIGKILLed mid-run: its replica takes over, every acknowledged push is processed (0 lost)', async () => {
      const prefix = `cl-failover-${client}:`;
      const base = { client, clusterNodes: own.urls, prefix, inboxOptions, logTo: 'ipc' as const };
      const processes: InboxProcess[] = [];
      try {
        const receivers = await Promise.all([0, 1].map(() => startInboxProcess({ ...base, serve: webhookSecret })));
        const workers = await Promise.all([0, 1].map(() => startInboxProcess({ ...base, work: { concurrency: 4, callbackMs: 50 } })));
        processes.push(...receivers, ...workers);
        const master = await own.masterOf(`{${prefix}inbox}:stream`);
        expect(master).toBeDefined();
        const total = 60;
        let killed = false;
        const redelivered: number[] = [];
        for (let i = 0; i < total; i++) {
          if (i === 20) {
            await master!.kill();
            killed = true;
          }
          const tries = await deliver(sandbox, receivers[i % 2].url!, 'SO-failover-' + i);
          if (tries > 1) redelivered.push(i);
        }
        expect(killed).toBe(true);
        const lines = () => workers.flatMap((w) => w.lines);
        await until(
          () => byKeyOf(lines()).byKey.size === total && [...byKeyOf(lines()).byKey.values()].every((r) => r.ends.length > 0),
          'every push to run',
          60_000,
        );
        const { byKey } = byKeyOf(lines());
        const twice = [...byKey.values()].filter((runs) => runs.starts.length > 1).length;
        // Pushes answered 503 while the master was down were redelivered; none was lost.
        expect({ lost: total - [...byKey.values()].filter((r) => r.ends.length > 0).length }).toEqual({ lost: 0 });
        expect(redelivered.length).toBeGreaterThan(0);
        // Only pushes held across the failover may run twice: a handful, not the run.
        expect(twice).toBeLessThan(20);
        const now = await own.masterOf(
          `{${prefix}inbox}:stream`,
          own.nodes.find((n) => n !== master),
        );
        expect(now && now !== master).toBe(true);
      } finally {
        await Promise.all(processes.map((p) => p.close()));
      }
    });
  });
});
