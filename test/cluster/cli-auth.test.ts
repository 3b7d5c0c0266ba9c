/**
 * `channel-sandbox inbox … --cluster` on a real 3-master Redis Cluster that asks for a password
 * (requirepass on every node, as a managed Cluster does), from the built CLI in a subprocess, with
 * the project's ioredis and with node-redis alone: the password in the URLs reaches every node the
 * Cluster client finds, not only the first connection. It used to be dropped (ioredis got host and
 * port only; node-redis kept it for the seed connection alone): "could not connect … within 10 s".
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Cluster as IoCluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { seedDeadLetter } from '../testing/cli/dead-letter.js';
import { cli, hasCluster, startCluster, type Cluster } from './cluster.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const password = 'pw@cl-9f8e7d';

function run(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'dist/sandbox-cli.js'), ...args], { cwd, env: { ...process.env, REDIS_URL: '' } });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr })));
  });
}

describe.runIf(hasCluster)('channel-sandbox inbox --cluster on a Cluster with a password', () => {
  let cluster: Cluster;
  const nodeRedisOnly = mkdtempSync(join(tmpdir(), 'channel-cli-cluster-node-redis-'));
  beforeAll(async () => {
    mkdirSync(join(nodeRedisOnly, 'node_modules'));
    symlinkSync(join(root, 'node_modules/redis'), join(nodeRedisOnly, 'node_modules/redis'));
    cluster = await startCluster();
    for (const node of cluster.nodes) await cli(node.port, 'CONFIG', 'SET', 'requirepass', password);
    const client = new IoCluster(
      cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
      { redisOptions: { password } },
    );
    for (const order of ['SO-auth-io', 'SO-auth-node']) await seedDeadLetter(client, 'auth:', order);
    client.disconnect();
  });
  afterAll(async () => {
    await cluster?.stop();
    rmSync(nodeRedisOnly, { recursive: true, force: true });
  });

  test.each([
    ['ioredis', 'SO-auth-io', root],
    ['node-redis alone', 'SO-auth-node', nodeRedisOnly],
  ])('%s: inbox dead lists the dead letters, inbox replay <the id it names> puts it back; the password never printed', async (_label, order, cwd) => {
    const urls = cluster.nodes.map((n) => `redis://:${encodeURIComponent(password)}@127.0.0.1:${n.port}`).join(',');
    const dead = await run(['inbox', 'dead', '--cluster', '--redis', urls, '--prefix', 'auth:', '--json'], cwd);
    expect({ code: dead.code, stderr: dead.stderr }).toEqual({ code: 0, stderr: '' });
    const letter = (JSON.parse(dead.stdout) as Array<{ id: string; orderNo: string }>).find((d) => d.orderNo === order);
    expect(letter).toBeDefined();
    const replay = await run(['inbox', 'replay', letter!.id, '--cluster', '--redis', urls, '--prefix', 'auth:'], cwd);
    expect(replay).toMatchObject({ code: 0, stdout: '1 dead letter back in the inbox\n' });
    expect([dead, replay].some((r) => (r.stdout + r.stderr).includes('cl-9f8e7d'))).toBe(false);
  });
});
