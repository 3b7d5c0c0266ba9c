// Starts inbox-instance.mjs child processes (receivers and workers of "your backend") and reads
// what their callbacks logged. Shared by crash.integration.test.ts, test/cluster/inbox.test.ts and the bench.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { next } from '../../redis/instances.mjs';

const script = fileURLToPath(new URL('./inbox-instance.mjs', import.meta.url));

/** Forks one instance with `config` and waits until it is ready. */
export async function startInboxProcess(config) {
  const child = fork(script, [JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  child.output = ''; // kept, not printed: shown only if the instance dies
  child.stdout.on('data', (chunk) => (child.output += chunk));
  child.stderr.on('data', (chunk) => (child.output += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const lines = [];
  child.on('message', (message) => message.type === 'log' && lines.push(message.line));
  const { port } = await next(child, 'ready').catch((error) => {
    child.kill('SIGKILL');
    throw error;
  });
  return {
    pid: child.pid,
    port,
    /** What its callbacks logged through IPC (logTo 'ipc'). */
    lines,
    url: port ? `http://127.0.0.1:${port}/webhooks/channel` : undefined,
    /** SIGKILL: no drain, no goodbye. */
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    reports: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return [];
      const answer = next(child, 'reports');
      child.send({ type: 'reports' });
      return (await answer).reports;
    },
    /** worker.close() (drains), then the process exits; its reports. */
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return [];
      const closed = next(child, 'closed');
      child.send({ type: 'close' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const { reports } = await closed.catch(() => ({ reports: [] }));
      clearTimeout(timer);
      await exited;
      return reports;
    },
  };
}

/**
 * What the callbacks logged (`<prefix>log`), read with `lrange` (a function of the test's own
 * client): per dedupKey, the runs started and ended, with the pid of each.
 */
export async function readLog(lrange, prefix) {
  return byKeyOf((await lrange(prefix + 'log', 0, -1)).map((line) => JSON.parse(line)));
}

/** Log lines grouped per dedupKey. */
export function byKeyOf(lines) {
  const byKey = new Map();
  for (const line of lines) {
    const runs = byKey.get(line.key) ?? { order: line.order, starts: [], ends: [] };
    (line.phase === 'start' ? runs.starts : runs.ends).push(line.pid);
    byKey.set(line.key, runs);
  }
  return { lines, byKey };
}
