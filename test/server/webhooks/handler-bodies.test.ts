/**
 * Slow and stalled bodies (issue #21 item 3): a body has `bodyTimeoutMs` to arrive (408, the
 * connection closed), and bodies in flight share `maxBufferedBytes` (the most stalled gives way
 * with 503 + Retry-After; the connection is closed), so that connections which stall cannot pin
 * memory while real pushes are still served. Real sockets against a real node:http server, and
 * a Fetch `Request` whose body stream stalls. The 1,000-connection RSS measurement is in
 * `npm run bench:webhooks` (`--only stall`), not here.
 */
import type { Server, Socket } from 'node:net';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { createWebhookHandler, signWebhookBody, type WebhookErrorInfo, type WebhookHandlerOptions } from '../../../src/server-node.js';
import { nodeServer } from '../http/doors.js';
import { largeLogistics } from '../helpers.js';
import { PROJECT_BODY } from '../implementations.js';
import { stall as stallBody, type Stalled } from './stalled.js';

const secret = 'test_secret_123';
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function webhook(options: Partial<WebhookHandlerOptions> = {}) {
  const reported: string[] = [];
  let received = 0;
  const handler = createWebhookHandler({
    secret,
    onLogisticsUpdated: () => void received++,
    onError: (_error: unknown, info: WebhookErrorInfo) => void reported.push(`${info.stage}/${info.status}`),
    ...options,
  });
  return { handler, reported, received: () => received };
}

/** A node:http server for the handler that keeps its accepted sockets in order. */
async function serve(handler: ReturnType<typeof webhook>['handler']) {
  const running = await nodeServer(handler);
  closers.push(running.close);
  const accepted: Socket[] = [];
  (running.server as unknown as Server).on('connection', (socket: Socket) => accepted.push(socket));
  return { ...running, port: Number(new URL(running.url).port), accepted };
}

/** A stalled client, destroyed after the test. */
async function stall(port: number, declared: number, sent: number): Promise<Stalled> {
  const client = await stallBody(port, declared, sent);
  closers.push(async () => void client.socket.destroy());
  return client;
}

/** Waits until the server has read `bytes` from its `index`-th accepted connection. */
const serverRead = (server: { accepted: Socket[] }, index: number, bytes: number) =>
  vi.waitFor(() => expect(server.accepted[index]?.bytesRead ?? 0).toBeGreaterThanOrEqual(bytes), { timeout: 10_000, interval: 10 });

async function signedPush(url: string, body: string) {
  const response = await fetch(url + '/hook', { method: 'POST', headers: { 'x-channel-webhook-signature': await signWebhookBody(body, secret) }, body });
  return response.status;
}

describe('a body deadline (bodyTimeoutMs)', () => {
  test('node:http: a body that stalls -> 408 after bodyTimeoutMs, and the connection is closed', async () => {
    const { handler, reported } = webhook({ bodyTimeoutMs: 300 });
    const server = await serve(handler);
    const client = await stall(server.port, 1000, 10);
    await vi.waitFor(() => expect(client.closed).toBe(true), { timeout: 10_000, interval: 20 });
    expect(client.head).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(client.head).toMatch(/\r\nConnection: close\r\n/i);
    expect(client.head).toMatch(/\{"error":"the body did not arrive in time"\}$/);
    expect(reported).toEqual(['body/408']);
  });

  test('node:http: a body that keeps trickling is still cut at the deadline (counted from the start, not per chunk)', async () => {
    const { handler } = webhook({ bodyTimeoutMs: 400 });
    const server = await serve(handler);
    const client = await stall(server.port, 100_000, 1);
    const trickle = setInterval(() => client.socket.write('x'), 50);
    try {
      await vi.waitFor(() => expect(client.closed).toBe(true), { timeout: 10_000, interval: 20 });
    } finally {
      clearInterval(trickle);
    }
    expect(client.status).toBe(408);
  });

  test('Fetch Request: a body stream that stalls -> 408 with Connection: close', async () => {
    const { handler, reported } = webhook({ bodyTimeoutMs: 200 });
    const stalled = new ReadableStream<Uint8Array>({ start: (controller) => controller.enqueue(new TextEncoder().encode('{"event":')) });
    const request = new Request('http://partner.example/hook', {
      method: 'POST',
      headers: { 'x-channel-webhook-signature': await signWebhookBody('x', secret) },
      body: stalled,
      duplex: 'half',
    } as RequestInit);
    const response = await handler(request);
    expect([response.status, response.headers.get('connection'), await response.json()]).toEqual([408, 'close', { error: 'the body did not arrive in time' }]);
    expect(reported).toEqual(['body/408']);
  });

  test('a push that arrives in time is untouched by the deadline; the next push on the connection too', async () => {
    const { handler, received } = webhook({ bodyTimeoutMs: 200 });
    const server = await serve(handler);
    expect(await signedPush(server.url, PROJECT_BODY)).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 400)); // past a deadline that must not fire for an answered push
    expect(await signedPush(server.url, PROJECT_BODY)).toBe(200);
    expect(received()).toBe(2);
  });
});

describe('a bound on bytes in flight (maxBufferedBytes)', () => {
  const KiB = 1024;

  test('a push that does not fit: the most stalled body gives way (503, Retry-After, closed) and the push is served', async () => {
    const { handler, reported, received } = webhook({ maxBodyBytes: 32 * KiB, maxBufferedBytes: 64 * KiB, bodyTimeoutMs: 3000 });
    const server = await serve(handler);
    const first = await stall(server.port, 32 * KiB, 30 * KiB);
    await serverRead(server, 0, 30 * KiB);
    const second = await stall(server.port, 32 * KiB, 30 * KiB);
    await serverRead(server, 1, 30 * KiB);
    const body = JSON.stringify({ event: 'logistics.updated', logistics: largeLogistics(8 * KiB) });
    expect(await signedPush(server.url, body)).toBe(200);
    await vi.waitFor(() => expect(first.closed).toBe(true), { timeout: 10_000, interval: 20 });
    expect(first.head).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(first.head).toMatch(/\r\nRetry-After: 3\r\n/i);
    expect(first.head).toMatch(/\r\nConnection: close\r\n/i);
    expect(second.closed).toBe(false); // still within budget and deadline
    await vi.waitFor(() => expect(second.closed).toBe(true), { timeout: 10_000, interval: 20 });
    expect(second.status).toBe(408);
    expect([received(), reported]).toEqual([1, ['body/503', 'body/408']]);
  });

  test('nothing can give way (callbacks hold the budget): the new body gets 503; the bytes are freed once they answer', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { handler, reported } = webhook({ maxBodyBytes: 2 * KiB, maxBufferedBytes: 4 * KiB, onLogisticsUpdated: () => gate });
    const server = await serve(handler);
    const body = JSON.stringify({ event: 'logistics.updated', logistics: largeLogistics(1500) });
    expect(Buffer.byteLength(body)).toBeGreaterThan(1400);
    const held = [signedPush(server.url, body), signedPush(server.url, body)];
    await vi.waitFor(() => expect(server.accepted.length).toBe(2));
    await serverRead(server, 0, Buffer.byteLength(body));
    await serverRead(server, 1, Buffer.byteLength(body));
    const refused = await fetch(server.url + '/hook', {
      method: 'POST',
      headers: { 'x-channel-webhook-signature': await signWebhookBody(body, secret) },
      body,
    });
    expect([refused.status, refused.headers.get('retry-after'), refused.headers.get('connection')]).toEqual([503, '8', 'close']);
    release();
    expect(await Promise.all(held)).toEqual([200, 200]);
    expect(await signedPush(server.url, body)).toBe(200); // the budget is whole again
    expect(reported).toEqual(['body/503']);
  });

  test('40 stalled connections: real pushes meanwhile are all served, and every stalled connection is closed', async () => {
    const { handler, received } = webhook({ maxBodyBytes: 64 * KiB, maxBufferedBytes: 256 * KiB, bodyTimeoutMs: 1000 });
    const server = await serve(handler);
    const attack = await Promise.all(Array.from({ length: 40 }, () => stall(server.port, 64 * KiB, 64 * KiB - 1)));
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push(await signedPush(server.url, PROJECT_BODY));
    expect(statuses).toEqual(Array(10).fill(200));
    expect(received()).toBe(10);
    await vi.waitFor(() => expect(attack.filter((c) => !c.closed)).toEqual([]), { timeout: 15_000, interval: 50 });
    expect(new Set(attack.map((c) => c.status))).toEqual(new Set([408, 503]));
  });
});

describe('options', () => {
  test('unknown keys and wrong values -> ConfigError naming the option', () => {
    const base = { secret, onLogisticsUpdated: () => {} };
    expect(() => createWebhookHandler({ ...base, bodyTimeout: 5000 } as never)).toThrow(
      /unknown createWebhookHandler option "bodyTimeout"; did you mean "bodyTimeoutMs"\?/,
    );
    expect(() => createWebhookHandler({ ...base, timeout: 5000 } as never)).toThrow(/did you mean "bodyTimeoutMs"\?/);
    expect(() => createWebhookHandler({ ...base, limit: '1mb' } as never)).toThrow(/did you mean "maxBodyBytes"\?/);
    expect(() => createWebhookHandler({ ...base, maxBufferBytes: 1 } as never)).toThrow(/did you mean "maxBufferedBytes"\?/);
    expect(() => createWebhookHandler({ ...base, bodyTimeoutMs: 0 })).toThrow(
      /bodyTimeoutMs must be a number of milliseconds from 1 to 2147483647 \(e\.g\. 8000\); got 0/,
    );
    expect(() => createWebhookHandler({ ...base, bodyTimeoutMs: '8s' as never })).toThrow(/got "8s"/);
    expect(() => createWebhookHandler({ ...base, maxBufferedBytes: 1000, maxBodyBytes: 2000 })).toThrow(
      /maxBufferedBytes \(1000\) must be at least maxBodyBytes \(2000\)/,
    );
  });
});
