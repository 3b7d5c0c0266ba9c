import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, expect, test } from 'vitest';
import { createWebhookHandler, signWebhookBody, toNodeHandler } from '../../src/server-node.js';
import { PROJECT_BODY } from './implementations.js';

const secret = 'test_secret_123';
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const received: unknown[] = [];
const handler = createWebhookHandler({ secret, onLogisticsUpdated: (event) => void received.push(event.logistics.order_no), onError: () => {} });

async function post(url: string, body = PROJECT_BODY, signature?: string) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-channel-webhook-signature': signature ?? (await signWebhookBody(body, secret)) },
    body,
  });
}

test('node:http server: signed push -> 200, tampered -> 401, GET -> 405', async () => {
  const url = await listen(createServer(toNodeHandler(handler)));
  received.length = 0;
  expect((await post(url)).status).toBe(200);
  expect(received).toEqual(['SO20240601001']);
  expect((await post(url, PROJECT_BODY.replace('SF', 'ZT'), await signWebhookBody(PROJECT_BODY, secret))).status).toBe(401);
  expect((await fetch(url)).status).toBe(405);
});

test('Express with express.raw() on the route -> 200', async () => {
  const app = express();
  app.post('/hook', express.raw({ type: 'application/json' }), toNodeHandler(handler));
  const url = await listen(createServer(app));
  expect((await post(url + '/hook')).status).toBe(200);
});

test('Express route mounted before any parser (stream read by the adapter) -> 200', async () => {
  const app = express();
  app.post('/hook', toNodeHandler(handler));
  app.use(express.json());
  const url = await listen(createServer(app));
  expect((await post(url + '/hook')).status).toBe(200);
});

test('Express with express.json() before the route -> a clear error through next()', async () => {
  const app = express();
  app.use(express.json());
  app.post('/hook', toNodeHandler(handler));
  let message = '';
  app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    message = error.message;
    res.status(500).end();
  });
  const url = await listen(createServer(app));
  expect((await post(url + '/hook')).status).toBe(500);
  expect(message).toMatch(/already parsed by a JSON body parser.*express\.raw\(\{ type: 'application\/json' \}\)/);
});
