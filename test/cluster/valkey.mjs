// `npm run test:valkey`: the single-node Redis tests (token cache, dedup store, inbox, multi-process)
// and the Redis Cluster stage again, on Valkey instead of redis-server. Debian packages
// valkey-server in bookworm-backports (12) and trixie (13); .ci/run installs it. Elsewhere,
// without it, this says so and passes; with CI=true it fails.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const server = process.env.VALKEY_SERVER_PATH ?? '/usr/bin/valkey-server';
const cli = process.env.VALKEY_CLI_PATH ?? '/usr/bin/valkey-cli';
if (!existsSync(server)) {
  const why = `no valkey-server at ${server}: apt-get install -t bookworm-backports valkey-server (Debian 12), or set VALKEY_SERVER_PATH`;
  if (process.env.CI === 'true') {
    console.error('test:valkey FAILED: ' + why);
    process.exit(1);
  }
  console.warn('test:valkey SKIPPED: ' + why);
  process.exit(0);
}
const env = { ...process.env, REDIS_SERVER_PATH: server, ...(existsSync(cli) ? { REDIS_CLI_PATH: cli } : {}) };
const version = spawnSync(server, ['--version'], { encoding: 'utf8' }).stdout.trim();
process.stdout.write(`test:valkey: ${version}\n`);
const runs = [
  ['single node', ['vitest', 'run', 'test/server/redis', 'test/server/webhooks/inbox', 'test/server/webhooks/webhook-instances.integration.test.ts']],
  ['3-master cluster', ['vitest', 'run', '--config', 'test/cluster/vitest.config.ts']],
];
for (const [what, args] of runs) {
  const started = Date.now();
  const { status } = spawnSync('npx', args, { env, stdio: 'inherit' });
  process.stdout.write(`test:valkey ${what}: ${status === 0 ? 'passed' : 'FAILED'} in ${Math.round((Date.now() - started) / 1000)} s\n`);
  if (status !== 0) process.exit(status ?? 1);
}
