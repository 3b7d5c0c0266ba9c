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

function spawnServer(port, dir, persist) {
  // `--port 0` turns TCP off in redis-server, hence a port picked just before. `persist`: an
  // append-only file in `dir`, written at every command, so that down() then up() keeps the data.
  const appendonly = persist ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  return spawn(redisServerPath, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...appendonly, '--dir', dir, '--daemonize', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function whenReady(child) {
  let output = '';
  return new Promise((resolve) => {
    const onData = (chunk) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve(true);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', () => resolve(false));
    child.once('error', () => resolve(false));
  }).then((ready) => ({ ready, output }));
}

async function tryStart(port, dir, persist) {
  let child = spawnServer(port, dir, persist);
  const { ready, output } = await whenReady(child);
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
    async down() {
      if (paused) child.kill('SIGCONT');
      paused = false;
      child.kill('SIGTERM');
      await exited(child);
    },
    async up() {
      child = spawnServer(port, dir, persist);
      const again = await whenReady(child);
      if (!again.ready) throw new Error('redis-server did not start again: ' + again.output.slice(-500));
    },
  };
}

/** Starts a private redis-server; call `stop()` when done. */
export async function startRedis({ persist = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'channel-sdk-redis-'));
  for (let attempt = 0; attempt < 5; attempt++) {
    const server = await tryStart(await freePort(), dir, persist);
    if (server) return server;
  }
  throw new Error('redis-server: no free port after 5 tries');
}
