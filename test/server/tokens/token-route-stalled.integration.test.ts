/**
 * The token route's POST body deadline (#30.6), over real HTTP with a real exchange against the
 * sandbox: the token route read POST bodies without a deadline, and 500 unauthenticated POSTs
 * that stalled their body were all still held after 60 s (node:http's own limit is 300 s), while
 * the webhook route on the same server closed its 500 with 408 at 8 s. An integration test for
 * its length: it waits out the default deadline.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createTokenExchange, createTokenRoute, toNodeHandler, type TokenRouteErrorInfo } from '../../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { stall, type Stalled } from '../webhooks/stalled.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

test('500 POSTs that stall their body, default options -> each answered 408 and closed by bodyTimeoutMs (8 s) and some slack; a GET meanwhile gets its token', async () => {
  const reports: Array<[unknown, TokenRouteErrorInfo]> = [];
  const route = createTokenRoute({
    exchange: createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials }),
    resolveUser: (req: { headers: Record<string, string | string[] | undefined> }) => req.headers['x-user'] as string | undefined,
    onError: (error, info) => void reports.push([error, info]),
  });
  const server = createServer(toNodeHandler(route));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const sockets: Stalled[] = [];
  try {
    const started = performance.now();
    for (let i = 0; i < 500; i++) sockets.push(await stall(port, 100, 10, '/channel-token'));
    const get = await fetch(`http://127.0.0.1:${port}/channel-token`, { headers: { 'x-user': 'alice' } });
    expect([get.status, typeof ((await get.json()) as { access_token?: string }).access_token]).toEqual([200, 'string']);
    await expect.poll(() => sockets.filter((s) => s.closed).length, { timeout: 16_000, interval: 250 }).toBe(500);
    const ms = performance.now() - started;
    expect({ statuses: [...new Set(sockets.map((s) => s.status))], within14s: ms < 14_000 }).toEqual({ statuses: [408], within14s: true });
    expect(reports.filter(([, info]) => info.stage === 'body').length).toBe(500);
    expect((reports[0][0] as Error).message).toMatch(/the POST body did not arrive within bodyTimeoutMs \(8000 ms\); answered 408 and closed the connection/);
  } finally {
    for (const s of sockets) s.socket.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}, 30_000);
