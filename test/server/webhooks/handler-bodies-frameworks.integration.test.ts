/**
 * The body deadline through the README's recipes, booted with the real frameworks (Express 5,
 * Fastify 5, Koa 3, Hono 4 on @hono/node-server) and the handler's defaults: a stalled body gets
 * 408 at 8 s and its connection is closed, while a push from the sandbox is served. And where a
 * framework's own body reader runs before the handler (express.raw(), a Fastify parser that
 * buffers), the deadline cannot apply: the server's requestTimeout is what bounds it, as
 * docs/guide/webhooks.md tells users to set.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { toNodeHandler } from 'channel-sdk/server';
import type { Sandbox } from 'channel-sdk/testing';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { captureConsole, recipeEnvironment, sampleLogistics } from '../helpers.js';
import { stall as stallBody, type Stalled } from './stalled.js';

const secret = 'whsec_bodies';
let sandbox: Sandbox;
let webhook: typeof import('../../../examples/backend/channel.js').webhook;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  ({ sandbox, webhook } = await recipeEnvironment(secret));
});
afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
  vi.unstubAllEnvs();
  await sandbox.close();
});

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}

async function listenFastify(app: import('fastify').FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  closers.push(() => app.close());
  return (app.server.address() as AddressInfo).port;
}

const listenHono = (app: import('hono').Hono): Promise<number> =>
  new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
    closers.push(() => new Promise((r) => server.close(() => r())));
  });

async function stall(port: number): Promise<Stalled> {
  const client = await stallBody(port, 1000, 10, '/webhooks/channel');
  closers.push(async () => void client.socket.destroy());
  return client;
}

const closed = (clients: Stalled[], timeout: number) =>
  vi.waitFor(() => expect(clients.map((c) => (c.closed ? 'closed' : 'open, answered ' + (c.status ?? 'nothing')))).toEqual(clients.map(() => 'closed')), {
    timeout,
    interval: 100,
  });

test('Express, Fastify, Koa and Hono recipes: a stalled body -> 408 at the default 8 s and the connection closed; a push meanwhile -> 200', async () => {
  const ports = {
    express: await listen(createServer((await import('../../../examples/backend/express.js')).app)),
    fastify: await listenFastify((await import('../../../examples/backend/fastify.js')).app),
    koa: await listen(createServer((await import('../../../examples/backend/koa.js')).app.callback())),
    hono: await listenHono((await import('../../../examples/backend/hono.js')).app),
  };
  const output = captureConsole();
  try {
    const clients = await Promise.all(Object.values(ports).map((port) => stall(port)));
    const pushed = await Promise.all(
      Object.values(ports).map((port) => sandbox.pushLogistics(sampleLogistics, { url: `http://127.0.0.1:${port}/webhooks/channel` })),
    );
    expect(pushed.map((p) => p.status)).toEqual([200, 200, 200, 200]);
    await closed(clients, 30_000);
    expect(Object.fromEntries(Object.keys(ports).map((name, i) => [name, clients[i].status]))).toEqual({ express: 408, fastify: 408, koa: 408, hono: 408 });
  } finally {
    output.restore();
  }
  // The default reporter's one line per stalled body.
  expect(output.lines.filter((line) => line.includes('webhook body -> 408'))).toHaveLength(4);
}, 45_000);

test('a body that express.raw() or a Fastify buffer parser reads first is outside the deadline: the server requestTimeout bounds it', async () => {
  const app = express();
  app.post('/webhooks/channel', express.raw({ type: 'application/json' }), toNodeHandler(webhook));
  // Node's default is 300 s, checked every 30 s; a user lowers both (see docs/guide/webhooks.md).
  const expressPort = await listen(createServer({ requestTimeout: 1000, connectionsCheckingInterval: 100 }, app));
  // Fastify's default is no limit at all. It sets requestTimeout after creating the server, and
  // Node uses the larger of it and headersTimeout (60 s) for the body: both need setting.
  const fastify = Fastify({ requestTimeout: 1000, http: { headersTimeout: 1000, connectionsCheckingInterval: 100 } });
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  fastify.post('/webhooks/channel', toNodeHandler(webhook));
  const fastifyPort = await listenFastify(fastify);
  const clients = await Promise.all([expressPort, fastifyPort].map((port) => stall(port)));
  await closed(clients, 15_000);
  // The server's own 408 (Fastify's has its JSON body), not the handler's: it never got the body.
  for (const client of clients) {
    expect(client.status).toBe(408);
    expect(client.head).not.toContain('the body did not arrive in time');
  }
});
