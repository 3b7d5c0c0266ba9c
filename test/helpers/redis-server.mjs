// Starts a private redis-server on 127.0.0.1 at a free port, with no persistence. Plain JS so
// that the bench (test/bench/token-cache.mjs) and the tests (through redis.ts) share it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const redisServerPath = process.env.REDIS_SERVER_PATH ?? '/usr/bin/redis-server';

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

const exited = (child) => (child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve())));

async function tryStart(port, dir) {
  // `--port 0` turns TCP off in redis-server, hence a port picked just before.
  const child = spawn(redisServerPath, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = await new Promise((resolve) => {
    const onData = (chunk) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve(true);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', () => resolve(false));
    child.once('error', () => resolve(false));
  });
  if (!ready) {
    if (/in use/i.test(output)) return undefined; // another agent took the port first
    throw new Error('redis-server did not start: ' + output.slice(-500));
  }
  let paused = false;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (paused) child.kill('SIGCONT');
      child.kill('SIGTERM');
      await exited(child);
      rmSync(dir, { recursive: true, force: true });
    },
    pause() {
      paused = child.kill('SIGSTOP');
    },
    resume() {
      if (paused) child.kill('SIGCONT');
      paused = false;
    },
  };
}

/** Starts a private redis-server; call `stop()` when done. */
export async function startRedis() {
  const dir = mkdtempSync(join(tmpdir(), 'channel-sdk-redis-'));
  for (let attempt = 0; attempt < 5; attempt++) {
    const server = await tryStart(await freePort(), dir);
    if (server) return server;
  }
  throw new Error('redis-server: no free port after 5 tries');
}
