import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, test } from 'vitest';
import { ConfigError, createWebhookHandler, signWebhookBody, toNodeHandler, type WebhookErrorInfo } from '../../../src/server-node.js';
import { nodeServer } from './doors.js';
import { captureConsole } from '../helpers.js';
import { PROJECT_BODY } from '../implementations.js';

const secret = 'test_secret_123';
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function webhook(options: { maxBodyBytes?: number; quiet?: boolean } = {}) {
  const received: string[] = [];
  const reported: WebhookErrorInfo[] = [];
  const handler = createWebhookHandler({
    secret,
    ...(options.maxBodyBytes ? { maxBodyBytes: options.maxBodyBytes } : {}),
    onLogisticsUpdated: (event) => void received.push(event.logistics.order_no),
    ...(options.quiet === false ? {} : { onError: (_error: unknown, info: WebhookErrorInfo) => void reported.push(info) }),
  });
  return { handler, received, reported };
}

async function serve(handler: ReturnType<typeof webhook>['handler']) {
  const running = await nodeServer(handler);
  closers.push(running.close);
  return running;
}

/** Writes `raw` on a fresh TCP connection and resolves with everything read until it closes or `until` matches. */
function rawExchange(url: string, raw: string, until = /\r\n\r\n[\s\S]*\}$/): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString();
      if (until.test(text)) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    socket.write(raw);
  });
}

describe('toNodeHandler', () => {
  test('a chunked body over maxBodyBytes -> the client reads 413, no connection reset', async () => {
    const { handler, reported } = webhook();
    const { url } = await serve(handler);
    const signature = await signWebhookBody('x', secret);
    const answer = await new Promise<{ status: number; body: string; errors: string[] }>((resolve) => {
      const errors: string[] = [];
      const req = httpRequest(url, { method: 'POST', headers: { 'x-channel-webhook-signature': signature, 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body, errors }));
      });
      req.on('error', (error) => errors.push(error.message));
      const chunk = Buffer.alloc(64 * 1024, 'a');
      for (let i = 0; i < 48; i++) req.write(chunk); // 3 MiB
      req.end();
    });
    expect(answer).toEqual({ status: 413, body: '{"error":"payload too large"}', errors: [] });
    expect(reported.map((info) => info.stage)).toEqual(['size']);
  });

  test('a body far over the cap: 413 reaches the client before the connection is dropped', async () => {
    const { handler } = webhook({ maxBodyBytes: 1024 });
    const { url } = await serve(handler);
    const signature = await signWebhookBody('x', secret);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', headers: { 'x-channel-webhook-signature': signature } }, (res) => resolve(res.statusCode!));
      req.on('error', () => {}); // the server stops reading after its bound: writes may fail after the answer
      const chunk = Buffer.alloc(256 * 1024, 'a');
      let sent = 0;
      const pump = () => {
        while (sent < 64 * 1024 * 1024 && req.write(chunk)) sent += chunk.length;
        if (sent < 64 * 1024 * 1024 && !req.destroyed) req.once('drain', pump);
      };
      pump();
      setTimeout(() => reject(new Error('no answer')), 10_000).unref();
    });
    expect(status).toBe(413);
  });

  test('a declared Content-Length over the cap -> 413 before any byte of the body is read', async () => {
    const { handler } = webhook();
    const { url } = await serve(handler);
    const signature = await signWebhookBody('x', secret);
    const text = await rawExchange(
      url,
      `POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Channel-Webhook-Signature: ${signature}\r\nContent-Length: 52428800\r\n\r\n{"a":`,
    );
    expect(text).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
    expect(text).toMatch(/\{"error":"payload too large"\}$/);
  });

  test('a malformed Host header -> 400, and nothing on the console', async () => {
    const { handler } = webhook({ quiet: false });
    const { url } = await serve(handler);
    const output = captureConsole();
    let text: string;
    try {
      text = await rawExchange(url, 'POST /hook HTTP/1.1\r\nHost: exa mple/x\r\nContent-Length: 2\r\n\r\n{}');
    } finally {
      output.restore();
    }
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(text).toMatch(/\{"error":"bad request"\}$/);
    expect(output.lines).toEqual([]);
  });

  test('a refused request leaves the keep-alive connection usable for the next push', async () => {
    const { handler, received } = webhook();
    const { url } = await serve(handler);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    const send = (method: string, headers: Record<string, string>, body?: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(url, { method, headers, agent }, (res) => {
          sockets.add(res.socket);
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        req.end(body);
      });
    expect(await send('PUT', {}, 'x'.repeat(100_000))).toBe(405);
    expect(await send('POST', { 'x-channel-webhook-signature': 'ab'.repeat(32) }, PROJECT_BODY)).toBe(401);
    expect(await send('POST', { 'x-channel-webhook-signature': await signWebhookBody(PROJECT_BODY, secret) }, PROJECT_BODY)).toBe(200);
    agent.destroy();
    expect(received).toEqual(['SO20240601001']);
    expect(sockets.size).toBe(1);
  });

  test('a client that goes away mid-body: reported as body, nothing thrown, nothing logged', async () => {
    const { handler, reported } = webhook();
    const { url } = await serve(handler);
    const signature = await signWebhookBody('x', secret);
    const { port } = new URL(url);
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(`POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Channel-Webhook-Signature: ${signature}\r\nContent-Length: 1000\r\n\r\n{"event":`);
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 50);
      });
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(reported.map((info) => [info.stage, info.status])).toEqual([['body', 400]]);
  });

  test('Express: a body from express.raw() or express.json({ verify }) keeping req.rawBody is used as is', async () => {
    const { handler, received } = webhook();
    const app = express();
    app.post('/raw', express.raw({ type: 'application/json', limit: '2mb' }), toNodeHandler(handler));
    app.post('/verify', express.json({ verify: (req, _res, buf) => void ((req as typeof req & { rawBody?: Buffer }).rawBody = buf) }), toNodeHandler(handler));
    const { createServer } = await import('node:http');
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const headers = { 'content-type': 'application/json', 'x-channel-webhook-signature': await signWebhookBody(PROJECT_BODY, secret) };
    expect((await fetch(base + '/raw', { method: 'POST', headers, body: PROJECT_BODY })).status).toBe(200);
    expect((await fetch(base + '/verify', { method: 'POST', headers, body: PROJECT_BODY })).status).toBe(200);
    expect(received).toEqual(['SO20240601001', 'SO20240601001']);
  });

  test('takes only what createWebhookHandler or createTokenRoute returns', () => {
    expect(() => toNodeHandler((async () => new Response()) as never)).toThrow(ConfigError);
    expect(() => toNodeHandler(undefined as never)).toThrow(/createWebhookHandler\(\.\.\.\) or createTokenRoute\(\.\.\.\)/);
  });
});
