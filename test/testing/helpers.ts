import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { createWebhookHandler, toNodeHandler } from '../../src/server-node.js';
import { startSandbox, type SandboxOptions } from '../../src/testing.js';

/** Closed after each test of the file that imports this module. */
export const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A sandbox closed after the test. */
export async function sandboxWith(options: SandboxOptions = {}) {
  const sandbox = await startSandbox(options);
  closers.push(() => sandbox.close());
  return sandbox;
}

/**
 * A webhook receiver on the package's own handler (`received`: the order numbers it accepted),
 * or, with `status`, one that answers that status after `delayMs`.
 */
export async function receiver(o: { secret?: string; status?: number; delayMs?: number } = {}) {
  const received: string[] = [];
  const node = toNodeHandler(
    createWebhookHandler({ secret: o.secret ?? 'whsec_test', onLogisticsUpdated: (e) => void received.push(e.logistics.order_no), onError: () => {} }),
  );
  const server = createServer((req, res) => {
    if (o.status) return void setTimeout(() => res.writeHead(o.status as number).end(), o.delayMs ?? 0);
    node(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => (server.closeAllConnections(), server.close(r))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/channel`, received };
}
