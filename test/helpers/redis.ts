/**
 * A real redis-server (Debian's, /usr/bin/redis-server) for the tests: started on 127.0.0.1 at
 * a free port with no persistence, stopped after. Without it the Redis tests are skipped with
 * the reason (printed once per run); with CI=true they fail instead (.ci/run installs it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const redisServerPath = process.env.REDIS_SERVER_PATH ?? '/usr/bin/redis-server';
export const hasRedis = existsSync(redisServerPath);
export const redisMissing = `no redis-server at ${redisServerPath}: install Debian's redis-server (apt-get install -y redis-server) or set REDIS_SERVER_PATH`;

if (!hasRedis && process.env.CI !== 'true') {
  // Every test file loads this helper; the marker keeps the notice to one line per run.
  try {
    writeFileSync(join(tmpdir(), `channel-sdk-redis-skip-${process.ppid}`), '', { flag: 'wx' });
    console.warn(`[redis] Redis tests SKIPPED: ${redisMissing}. With CI=true this is a failure.`);
  } catch {
    // Already said in this run.
  }
}

export interface RedisServer {
  port: number;
  /** `redis://127.0.0.1:<port>` */
  url: string;
  /** Stops the server for good (SIGTERM, waits for the exit). */
  stop(): Promise<void>;
  /** Freezes the process (SIGSTOP): connections stay open, nothing answers. */
  pause(): void;
  /** Thaws a paused server (SIGCONT). */
  resume(): void;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

async function tryStart(port: number, dir: string): Promise<RedisServer | undefined> {
  // `--port 0` turns TCP off in redis-server, hence a port picked just before.
  const child = spawn(redisServerPath, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = await new Promise<boolean>((resolve) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve(true);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', () => resolve(false));
    child.once('error', () => resolve(false));
  });
  if (!ready) {
    if (/in use/i.test(output)) return undefined; // another agent took the port first
    throw new Error('redis-server did not start: ' + output.slice(-500));
  }
  child.stdout?.resume();
  child.stderr?.resume();
  let paused = false;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (paused) child.kill('SIGCONT');
      child.kill('SIGTERM');
      await exited(child);
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
export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'channel-sdk-redis-'));
  for (let attempt = 0; attempt < 5; attempt++) {
    const server = await tryStart(await freePort(), dir);
    if (server) {
      const stop = server.stop;
      return Object.assign(server, {
        async stop() {
          await stop();
          rmSync(dir, { recursive: true, force: true });
        },
      });
    }
  }
  throw new Error('redis-server: no free port after 5 tries');
}
