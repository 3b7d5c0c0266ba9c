/**
 * `channel-sandbox doctor --cluster` on a real 3-master Redis Cluster (cluster.mjs): each node's
 * settings checked on their own (one switched to allkeys-lru fails, alone), the inbox's state read
 * through a Cluster client (a dead letter), from the built CLI in a subprocess.
 */
import { spawn } from 'node:child_process';
import { Cluster as IoCluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runIdleWorker, seedDeadLetter, seedWaitingPush } from '../testing/cli/dead-letter.js';
import { cli, hasCluster, startCluster, type Cluster } from './cluster.mjs';

function doctor(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['dist/sandbox-cli.js', 'doctor', ...args], { env: { ...process.env, REDIS_URL: '', CHANNEL_BASE_URL: '' } });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

describe.runIf(hasCluster)('channel-sandbox doctor --cluster', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster();
    const client = new IoCluster(cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })));
    await seedDeadLetter(client, 'doc:', 'SO-cluster-dead');
    client.disconnect();
    await cli(cluster.nodes[1].port, 'CONFIG', 'SET', 'maxmemory', '64mb');
    await cli(cluster.nodes[1].port, 'CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  test("one part per node, the evicting node's line alone fails; the dead letter found through the Cluster client", async () => {
    const { code, stdout } = await doctor(['--cluster', '--redis', cluster.urls.join(','), '--prefix', 'doc:', '--json']);
    expect(code).toBe(1);
    const report = JSON.parse(stdout) as { parts: Array<{ target: string; url: string; checks: Array<{ id: string; status: string; fix?: string }> }> };
    const redis = report.parts.filter((p) => p.target === 'redis');
    expect(redis.map((p) => p.url)).toEqual([`${cluster.urls[0]} (prefix doc:)`, cluster.urls[1], cluster.urls[2]]);
    const failed = redis.flatMap((p, i) => p.checks.filter((c) => c.status === 'fail').map((c) => `${i}:${c.id}`));
    expect(failed).toEqual(['0:dead-letters', '1:maxmemory-policy']);
    expect(redis[0].checks.find((c) => c.id === 'dead-letters')?.fix).toContain(
      `channel-sandbox inbox dead --cluster --redis ${cluster.urls.join(',')} --prefix doc:`,
    );
  });

  test.each([[[]], [['--cluster']]])(
    'one node given (%j): every master holding slots is found (CLUSTER NODES) and checked, the evicting one fails, the inbox read through the Cluster',
    async (flag) => {
      const { code, stdout } = await doctor([...flag, '--redis', cluster.urls[0], '--prefix', 'doc:', '--json']);
      expect(code).toBe(1);
      const report = JSON.parse(stdout) as { parts: Array<{ target: string; url: string; checks: Array<{ id: string; status: string; fix?: string }> }> };
      const redis = report.parts.filter((p) => p.target === 'redis');
      expect(redis.map((p) => p.url.replace(' (prefix doc:)', '')).toSorted()).toEqual(cluster.urls.toSorted());
      expect(redis[0].url).toBe(`${cluster.urls[0]} (prefix doc:)`);
      const failed = redis.flatMap((p) => p.checks.filter((c) => c.status === 'fail').map((c) => `${p.url.replace(' (prefix doc:)', '')}:${c.id}`));
      expect(failed.toSorted()).toEqual([`${cluster.urls[0]}:dead-letters`, `${cluster.urls[1]}:maxmemory-policy`].toSorted());
      expect(redis[0].checks.find((c) => c.id === 'dead-letters')?.fix).toContain('channel-sandbox inbox dead --cluster --redis ');
    },
  );

  test('a receiver whose ioredis Cluster client has keyPrefix "{rx}:" (its own slot, another master) and workers without it: doctor, given the workers\' view, fails naming "{rx}:" and its waiting push', async () => {
    const nodes = cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
    const [receiver, plain] = [new IoCluster(nodes, { keyPrefix: '{rx}:' }), new IoCluster(nodes)];
    const stop = runIdleWorker(plain, 'doc-split:');
    try {
      await seedWaitingPush(receiver, 'doc-split:', 'SO-cluster-split');
      const slots = await Promise.all(
        ['{rx}:{doc-split:inbox}:stream', '{doc-split:inbox}:stream'].map((key) => cli(cluster.nodes[0].port, 'cluster', 'keyslot', key)),
      );
      expect(slots[0]).not.toBe(slots[1]);
      const { code, stdout } = await doctor(['--redis', cluster.urls[2], '--prefix', 'doc-split:', '--json']);
      expect(code).toBe(1);
      const report = JSON.parse(stdout) as { parts: Array<{ target: string; checks: Array<{ id: string; status: string; detail: string; fix?: string }> }> };
      const checks = report.parts.filter((p) => p.target === 'redis').flatMap((p) => p.checks);
      expect(checks.find((c) => c.id === 'workers')).toMatchObject({ status: 'pass' });
      expect(checks.find((c) => c.id === 'key-prefixes')).toMatchObject({ status: 'fail', detail: expect.stringContaining('"{rx}:" (1 in its stream)') });
      expect(checks.find((c) => c.id === 'key-prefixes')?.fix).toContain(`channel-sandbox inbox stats --cluster --redis ${cluster.urls[2]},`);
      expect(checks.find((c) => c.id === 'key-prefixes')?.fix).toMatch(/ --prefix doc-split: --key-prefix \{rx\}:$/);
    } finally {
      await stop();
      receiver.disconnect();
      plain.disconnect();
    }
  });
});

describe.runIf(hasCluster)('channel-sandbox doctor on a Cluster with replicas', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({ masters: 3, replicas: 1 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  test("a replica's URL given: a seed a Cluster client starts from, not a wrong URL (its line passes, every master is found and checked, exit 0)", async () => {
    const nodes = String(await cli(cluster.nodes[0].port, 'CLUSTER', 'NODES')).split('\n');
    const replica = `redis://${
      nodes
        .find((l) => l.split(' ')[2]?.includes('slave'))
        ?.split(' ')[1]
        .split('@')[0]
    }`;
    const masters = nodes.filter((l) => l.split(' ')[2]?.includes('master')).map((l) => `redis://${l.split(' ')[1].split('@')[0]}`);
    const { code, stdout } = await doctor(['--redis', replica, '--json']);
    const report = JSON.parse(stdout) as { parts: Array<{ target: string; url: string; checks: Array<{ id: string; status: string; detail: string }> }> };
    const redis = report.parts.filter((p) => p.target === 'redis');
    expect(redis.map((p) => p.url).toSorted()).toEqual([replica, ...masters].toSorted());
    // Before: "✗ reachable: Redis 7…, a replica (read-only)", the fix "point --redis at the primary", exit 1.
    expect(redis.find((p) => p.url === replica)?.checks.find((c) => c.id === 'reachable')).toMatchObject({
      status: 'pass',
      detail: expect.stringContaining('a replica in the Cluster'),
    });
    expect(code).toBe(0);
  });
});

describe.runIf(hasCluster)('channel-sandbox doctor on a Cluster with a failed master', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({ masters: 3, replicas: 0, nodeTimeoutMs: 1000 });
    await cluster.nodes[2].stop();
    // The other nodes mark it failed (master,fail) after the node timeout.
    for (let i = 0; i < 60 && !/ master,fail /.test(String(await cli(cluster.nodes[0].port, 'CLUSTER', 'NODES'))); i++)
      await new Promise((r) => setTimeout(r, 250));
  });
  afterAll(async () => {
    await Promise.all(cluster?.nodes.slice(0, 2).map((n) => n.stop()) ?? []);
  });

  test('the failed master is a failing line of its own, with its slots, not left out of a report that passed (exit 1)', async () => {
    const { code, stdout } = await doctor(['--redis', cluster.urls[0], '--json']);
    const report = JSON.parse(stdout) as {
      parts: Array<{ target: string; url: string; checks: Array<{ id: string; status: string; detail: string; fix?: string }> }>;
    };
    const redis = report.parts.filter((p) => p.target === 'redis');
    // Before: the two live masters only, all ✓, exit 0, with the Cluster answering CLUSTERDOWN.
    expect(redis.map((p) => p.url).toSorted()).toEqual(cluster.urls.toSorted());
    expect(redis.find((p) => p.url === cluster.urls[2])?.checks[0]).toMatchObject({
      id: 'reachable',
      status: 'fail',
      detail: expect.stringMatching(/^the Cluster marks this master failed \(master,fail\), and no replica took over its slots \d+-\d+/),
      fix: expect.stringMatching(/^start that node again/),
    });
    expect(code).toBe(1);
  });
});
