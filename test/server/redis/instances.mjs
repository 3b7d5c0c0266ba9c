// Starts N backend instances (worker.mjs child processes) and runs them at once.
// Shared by multi-process.integration.test.ts, test/cluster/ and test/bench/token-cache.mjs.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const worker = fileURLToPath(new URL('./worker.mjs', import.meta.url));

/** The next IPC message of `type` from `child`; rejects (with its output) if it exits first. */
export function next(child, type) {
  return new Promise((resolve, reject) => {
    const onMessage = (message) => {
      if (message.type !== type) return;
      cleanup();
      resolve(message);
    };
    const onExit = (code, signal) => {
      cleanup();
      reject(new Error(`instance exited (${code ?? signal}) before "${type}": ${child.output.slice(-2000)}`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Forks `count` instances with `config` (see worker.mjs) and waits until each is connected. */
export async function startInstances(count, config) {
  const children = Array.from({ length: count }, () => {
    // Output is kept, not printed: shown only if an instance dies.
    const child = fork(worker, [JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    child.output = '';
    child.stdout.on('data', (chunk) => (child.output += chunk));
    child.stderr.on('data', (chunk) => (child.output += chunk));
    return child;
  });
  const ready = await Promise.all(children.map((child) => next(child, 'ready'))).catch((error) => {
    for (const child of children) child.kill();
    throw error;
  });
  const each = (message, answer) =>
    Promise.all(
      children.map((child) => {
        const result = next(child, answer);
        child.send(message);
        return result;
      }),
    );
  return {
    /** Each instance's HTTP port (token route, webhook handler), when it has a server. */
    ports: ready.map((message) => message.port),
    /** Every instance calls getToken at a steady pace; each call's start (epoch ms) and latency. */
    stream: (options) => each({ type: 'stream', ...options }, 'streamed'),
    /** The webhook callbacks each instance ran, and its cache errors since the last call. */
    report: () => each({ type: 'report' }, 'report'),
    /** Every instance fires `concurrency` getToken per user at the same moment; one result per instance. */
    run: (users, concurrency) => each({ type: 'run', users, concurrency }, 'result'),
    /** Sends `signal` to instance `index` (SIGKILL: a crash); resolves once it has exited. */
    kill: (index, signal = 'SIGKILL') =>
      new Promise((resolve) => {
        const child = children[index];
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
    close: () =>
      Promise.all(
        children.map(
          (child) =>
            new Promise((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              const timer = setTimeout(() => child.kill(), 5000);
              child.once('exit', () => {
                clearTimeout(timer);
                resolve();
              });
              child.send({ type: 'exit' });
            }),
        ),
      ),
  };
}
