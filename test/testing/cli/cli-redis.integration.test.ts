/**
 * cli-redis.ts: the CLI's connection through the project's own Redis client, as `channel-sandbox
 * inbox` makes it: the built dist/sandbox-cli.js in a subprocess, in a project that has
 * only node-redis, and in this one (ioredis first). A Redis that refuses is given up on in time,
 * with its error named: node-redis's connect() retries without end, and `inbox stats` used to
 * wait for it forever.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { freePort, startRedis } from '../../helpers/redis-server.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const nodeRedisOnly = mkdtempSync(join(tmpdir(), 'channel-cli-node-redis-'));
mkdirSync(join(nodeRedisOnly, 'node_modules'));
symlinkSync(join(root, 'node_modules/redis'), join(nodeRedisOnly, 'node_modules/redis'));
afterAll(() => rmSync(nodeRedisOnly, { recursive: true, force: true }));

function run(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'dist/sandbox-cli.js'), ...args], { cwd, env: { ...process.env, REDIS_URL: '' } });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => (stdout += d));
    // Killed when it hangs, so that the test reports instead of timing out.
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('close', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr, ms: Math.round(performance.now() - started) })));
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

test(
  'doctor and inbox never print a Redis password: in the user info (an @ in it), as ?password= (ioredis takes it), in a mistyped URL, in a list',
  { timeout: 90_000 },
  async () => {
    const secret = 'x9f8e7d6c';
    const redis = await startRedis({ args: ['--requirepass', 'pw@' + secret] });
    try {
      const { port } = new URL(redis.url);
      const at = `redis://:pw@${secret}@127.0.0.1:${port}`;
      const query = `redis://127.0.0.1:${port}?password=pw%40${secret}`;
      const runs = await Promise.all([
        run(['doctor', '--redis', at], root),
        run(['doctor', '--redis', query], root),
        run(['doctor', '--redis', query, '--prefix', 'app:', '--json'], root),
        run(['doctor', '--redis', `redis:/:pw@${secret}@127.0.0.1:${port}`], root),
        run(['doctor', '--redis', `http://:pw@${secret}@127.0.0.1:${port}`], root),
        run(['inbox', 'stats', '--redis', query], root),
        run(['doctor', '--redis', `${at},${at}`], root),
        run(['inbox', 'stats', '--redis', `redis:/:pw@${secret}@127.0.0.1:${port}`], root),
      ]);
      // The forms Redis takes connect (the password is right), the mistyped ones are refused: none prints it.
      expect(runs[0].stdout).toMatch(/^✓ reachable: PONG/m);
      expect(runs[1].stdout).toMatch(/^✓ reachable: PONG/m);
      expect(runs.map((r) => r.code)).toEqual([0, 0, 0, 2, 2, 0, 0, 2]);
      expect(runs.map((r, i) => ((r.stdout + r.stderr).includes(secret) ? i : -1)).filter((i) => i >= 0)).toEqual([]);
    } finally {
      await redis.stop();
    }
  },
);

test('doctor on a Redis that freezes (SIGSTOP) after it connected: the Redis line fails within its 5 s, doctor ends', { timeout: 90_000 }, async () => {
  const redis = await startRedis();
  // A receiver that never answers holds doctor for its 8 s window: Redis, connected at the start, freezes meanwhile.
  const silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const webhook = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/webhooks/channel`;
    const doctor = run(['doctor', '--webhook-url', webhook, '--webhook-secret', 'whsec_test', '--redis', redis.url, '--prefix', 'app:'], root);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    redis.pause();
    const result = await doctor;
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^✗ reachable: .*5 s/m);
    expect(result.ms).toBeLessThan(25_000);
  } finally {
    silent.closeAllConnections();
    silent.close();
    await redis.stop();
  }
});
