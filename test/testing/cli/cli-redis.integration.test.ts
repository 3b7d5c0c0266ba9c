/**
 * cli-redis.ts: the CLI's connection through the project's own Redis client, as `channel-sandbox
 * inbox` makes it: the built dist/sandbox-cli.js in a subprocess, in a project that has
 * only node-redis, and in this one (ioredis first). A Redis that refuses is given up on in time,
 * with its error named: node-redis's connect() retries without end, and `inbox stats` used to
 * wait for it forever.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { freePort } from '../../helpers/redis-server.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const nodeRedisOnly = mkdtempSync(join(tmpdir(), 'channel-cli-node-redis-'));
mkdirSync(join(nodeRedisOnly, 'node_modules'));
symlinkSync(join(root, 'node_modules/redis'), join(nodeRedisOnly, 'node_modules/redis'));
afterAll(() => rmSync(nodeRedisOnly, { recursive: true, force: true }));

function run(args: string[], cwd: string): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'dist/sandbox-cli.js'), ...args], { cwd, env: { ...process.env, REDIS_URL: '' } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    // Killed when it hangs, so that the test reports instead of timing out.
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('close', (code) => (clearTimeout(timer), resolve({ code, stderr, ms: Math.round(performance.now() - started) })));
  });
}

test('a Redis that refuses: inbox gives up within 10 s naming the error, with node-redis alone and with ioredis', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const [nodeRedis, ioredis] = await Promise.all([
    run(['inbox', 'stats', '--redis', `redis://127.0.0.1:${port}`], nodeRedisOnly),
    run(['inbox', 'stats', '--redis', `redis://:hunter2@127.0.0.1:${port}`], root),
  ]);
  for (const result of [nodeRedis, ioredis]) {
    expect(result).toMatchObject({
      code: 1,
      stderr: `channel-sandbox: inbox: could not connect to Redis at redis://${result === ioredis ? ':***@' : ''}127.0.0.1:${port} within 10 s (connect ECONNREFUSED 127.0.0.1:${port})\n`,
    });
    expect(result.ms).toBeLessThan(20_000);
  }
});
