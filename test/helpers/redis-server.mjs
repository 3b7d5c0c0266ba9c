// Starts a private redis-server on 127.0.0.1 at a free port, with no persistence unless asked.
// Plain JS so that the bench (test/bench/token-cache.mjs) and the tests (through redis.ts) share it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const redisServerPath = process.env.REDIS_SERVER_PATH ?? '/usr/bin/redis-server';

/** A TCP port free on 127.0.0.1 right now (test/cluster picks its nodes' ports with it too). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once `child` has exited. */
export const exited = (child) =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));

/**
 * Spawns the server with `args` and waits for "Ready to accept connections": the child, or
 * undefined when its port was taken in the meantime (test/cluster starts its nodes with it too).
 */
export async function spawnServer(args) {
  const child = spawn(redisServerPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
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
  if (ready) return child;
  if (/in use/i.test(output)) return undefined; // another agent took the port first
  throw new Error('redis-server did not start: ' + output.slice(-500));
}

// `--port 0` turns TCP off in redis-server, hence a port picked just before. `persist`: an
// append-only file in `dir`, written at every command, so that down() then up() keeps the data.
// `extra`: more arguments, e.g. ['--maxmemory', '3mb', '--maxmemory-policy', 'noeviction'].
function argsFor(port, dir, persist, extra) {
  const appendonly = persist ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  return ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...appendonly, '--dir', dir, '--daemonize', 'no', ...extra];
}

async function tryStart(port, dir, persist, extra) {
  let child = await spawnServer(argsFor(port, dir, persist, extra));
  if (!child) return undefined;
  let controls = controlsOf(child, () => rmSync(dir, { recursive: true, force: true }));
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop: () => controls.stop(),
    pause: () => controls.pause(),
    resume: () => controls.resume(),
    async down() {
      controls.resume();
      child.kill('SIGTERM');
      await exited(child);
      running.delete(child);
    },
    async up() {
      const again = await spawnServer(argsFor(port, dir, persist, extra));
      if (!again) throw new Error('redis-server did not start again: port ' + port + ' was taken');
      child = again;
      controls = controlsOf(child, () => rmSync(dir, { recursive: true, force: true }));
    },
  };
}

// Servers still running when this process exits (a crash, a test killed midway) go with it.
const running = new Set();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** stop() (SIGTERM, then `afterStop` once it exited), pause() (SIGSTOP: connections stay open, nothing answers), resume() (SIGCONT). */
export function controlsOf(child, afterStop = () => {}) {
  let paused = false;
  running.add(child);
  return {
    async stop() {
      if (paused) child.kill('SIGCONT');
      paused = false;
      child.kill('SIGTERM');
      await exited(child);
      running.delete(child);
      afterStop();
    },
    pause() {
      paused = child.kill('SIGSTOP');
    },
    resume() {
      if (paused) child.kill('SIGCONT');
      paused = false;
    },
    /** SIGKILL (a crash); stop() afterwards only cleans up. */
    async kill() {
      child.kill('SIGKILL');
      await exited(child);
    },
  };
}

/** Starts a private redis-server; call `stop()` when done. `args`: more server arguments. */
export async function startRedis({ persist = false, args = [] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'channel-sdk-redis-'));
  for (let attempt = 0; attempt < 5; attempt++) {
    const server = await tryStart(await freePort(), dir, persist, args);
    if (server) return server;
  }
  throw new Error('redis-server: no free port after 5 tries');
}
