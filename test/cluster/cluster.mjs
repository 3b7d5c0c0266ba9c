// A real Redis Cluster for the tests: `masters` redis-server processes (or valkey-server, through
// REDIS_SERVER_PATH) with `cluster-enabled yes`, each on a free port with its own temp dir,
// joined by `redis-cli --cluster create … --cluster-yes`, torn down by `stop()`.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { controlsOf, freePort, redisServerPath, spawnServer } from '../helpers/redis-server.mjs';

const run = promisify(execFile);
/** redis-cli (Debian's redis-tools), or valkey-cli: both speak to either server. */
export const redisCliPath = process.env.REDIS_CLI_PATH ?? (existsSync('/usr/bin/redis-cli') ? '/usr/bin/redis-cli' : '/usr/bin/valkey-cli');
export const hasCluster = existsSync(redisServerPath) && existsSync(redisCliPath);
export const clusterMissing = `a Redis Cluster needs ${redisServerPath} and ${redisCliPath}: apt-get install -y redis-server (redis-tools comes with it), or set REDIS_SERVER_PATH and REDIS_CLI_PATH`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One cluster node; undefined when a port was taken between the probe and the start. */
async function startNode(nodeTimeoutMs) {
  const [port, busPort] = [await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'channel-sdk-cluster-'));
  // The bus port is set (cluster-port, Redis 7 and Valkey) so that port + 10000 need not be free.
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--cluster-enabled',
    'yes',
    '--cluster-port',
    String(busPort),
    '--cluster-config-file',
    join(dir, 'nodes.conf'),
    '--cluster-node-timeout',
    String(nodeTimeoutMs),
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--daemonize',
    'no',
  ];
  const child = await spawnServer(args).catch((error) => {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  if (!child) {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  return { port, url: `redis://127.0.0.1:${port}`, ...controlsOf(child, () => rmSync(dir, { recursive: true, force: true })) };
}

/** `redis-cli -p <port> <args…>`, its output trimmed. */
export async function cli(port, ...args) {
  const { stdout } = await run(redisCliPath, ['-h', '127.0.0.1', '-p', String(port), ...args]);
  return stdout.trim();
}

/**
 * Starts a cluster of `masters` masters, each with `replicas` replicas, and waits until every node
 * says cluster_state:ok (and every replica is in sync). `nodeTimeoutMs`: how long a silent master
 * takes to be marked failed (then a replica of it is promoted).
 */
export async function startCluster({ masters = 3, replicas = 0, nodeTimeoutMs = 2000 } = {}) {
  const nodes = [];
  const count = masters * (1 + replicas);
  try {
    for (let tries = 0; nodes.length < count; tries++) {
      if (tries > count + 5) throw new Error('cluster: no free ports after several tries');
      const node = await startNode(nodeTimeoutMs);
      if (node) nodes.push(node);
    }
    await run(redisCliPath, ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', String(replicas), '--cluster-yes']);
    for (const node of nodes) {
      for (let waited = 0; !(await cli(node.port, 'cluster', 'info')).includes('cluster_state:ok'); waited += 50) {
        if (waited > 15_000) throw new Error('cluster: node ' + node.port + ' never reached cluster_state:ok');
        await sleep(50);
      }
    }
    for (const node of nodes) {
      for (let waited = 0; ; waited += 50) {
        const info = await cli(node.port, 'info', 'replication');
        if (info.includes('role:master') || info.includes('master_link_status:up')) break;
        if (waited > 15_000) throw new Error('cluster: replica ' + node.port + ' never synced with its master');
        await sleep(50);
      }
    }
  } catch (error) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw error;
  }
  return {
    nodes,
    urls: nodes.map((n) => n.url),
    /** Keys held by each node (DBSIZE), in node order. */
    sizes: () => Promise.all(nodes.map(async (n) => Number(await cli(n.port, 'dbsize')))),
    /** The node that serves `key` now, asked of `via` (a live node). */
    async masterOf(key, via = nodes[0]) {
      const slot = Number(await cli(via.port, 'cluster', 'keyslot', key));
      const line = (await cli(via.port, 'cluster', 'nodes')).split('\n').find(
        (l) =>
          l.includes('master') &&
          !l.includes('fail') &&
          l
            .split(' ')
            .slice(8)
            .some((range) => {
              const [from, to = from] = range.split('-').map(Number);
              return slot >= from && slot <= to;
            }),
      );
      const port = Number(/:(\d+)@/.exec(line ?? '')?.[1]);
      return nodes.find((n) => n.port === port);
    },
    stop: async () => void (await Promise.all(nodes.map((n) => n.stop()))),
  };
}
