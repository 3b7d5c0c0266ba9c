/**
 * The README's recipes (examples/backend/*.ts) booted with the real frameworks on 127.0.0.1:0 and
 * driven by the sandbox, as a partner's backend would be: Express 5, Fastify 5, Koa 3 with
 * @koa/router, Hono 4 on @hono/node-server. Next.js runs in `npm run test:frameworks`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Router } from '@koa/router';
import { serve } from '@hono/node-server';
import { createClient } from 'channel-sdk';
import { signWebhookBody, toNodeHandler, type Logistics } from 'channel-sdk/server';
import { checkTokenRoute, checkWebhook, type CheckReport, type Sandbox } from 'channel-sdk/testing';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import { afterAll, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { captureConsole, largeLogistics, recipeEnvironment, sampleLogistics } from '../helpers.js';

const secret = 'whsec_frameworks';
let sandbox: Sandbox;
let saved: Logistics[];
let webhook: typeof import('../../../examples/backend/channel.js').webhook;

beforeAll(async () => {
  ({ sandbox, webhook } = await recipeEnvironment(secret));
  saved = (await import('../../../examples/backend/your-app.js')).saved;
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await sandbox.close();
});
beforeEach(() => {
  saved.length = 0;
});

interface Running {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<Running> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function listenFastify(app: import('fastify').FastifyInstance): Promise<Running> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
}

const listenHono = (app: Hono): Promise<Running> =>
  new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
      resolve({ url: `http://127.0.0.1:${info.port}`, close: () => new Promise((r) => server.close(() => r())) }),
    );
  });

interface Framework {
  /** Boots examples/backend/<name>.ts as the README shows it. */
  recipe(): Promise<Running>;
  /** The same webhook route behind a body parser that reads the body first. */
  parsedFirst(): Promise<Running>;
  /** What parsed first, for the test name. */
  parser: string;
  /** The fix the answer must name. */
  advice: RegExp;
}

const frameworks: Record<string, Framework> = {
  'Express 5': {
    recipe: async () => listen(createServer((await import('../../../examples/backend/express.js')).app)),
    parser: 'express.json()',
    parsedFirst: async () => {
      const app = express();
      app.use(express.json());
      app.post('/webhooks/channel', express.raw({ type: 'application/json' }), toNodeHandler(webhook));
      return listen(createServer(app));
    },
    advice: /Express: .*app\.post\('\/webhooks\/channel', toNodeHandler\(webhook\)\) above app\.use\(express\.json\(\)\)/,
  },
  'Fastify 5': {
    recipe: async () => listenFastify((await import('../../../examples/backend/fastify.js')).app),
    parser: "Fastify's default JSON parser",
    parsedFirst: async () => {
      const app = Fastify();
      app.post('/webhooks/channel', toNodeHandler(webhook));
      return listenFastify(app);
    },
    advice: /Fastify: .*fastify\.register\(.*removeAllContentTypeParsers\(\).*addContentTypeParser\('\*'/,
  },
  'Koa 3 + @koa/router': {
    recipe: async () => listen(createServer((await import('../../../examples/backend/koa.js')).app.callback())),
    parser: 'koa-bodyparser',
    parsedFirst: async () => {
      const app = new Koa();
      const router = new Router();
      router.post('/webhooks/channel', toNodeHandler(webhook));
      app.use(bodyParser());
      app.use(router.routes());
      return listen(createServer(app.callback()));
    },
    advice: /Koa: .*app\.use\(router\.routes\(\)\) above app\.use\(bodyParser\(\)\)/,
  },
  'Hono 4 + @hono/node-server': {
    recipe: async () => listenHono((await import('../../../examples/backend/hono.js')).app),
    parser: 'a middleware that read c.req.json()',
    parsedFirst: async () => {
      const app = new Hono();
      app.use(async (c, next) => {
        if (c.req.header('content-type')?.includes('json')) await c.req.json();
        await next();
      });
      app.post('/webhooks/channel', webhook);
      return listenHono(app);
    },
    advice: /Hono: .*c\.req\.json\(\).*Keep body-reading middleware off this path/,
  },
};

const otherFrameworks = (name: string) => new RegExp(['Express', 'Fastify', 'Koa', 'Hono', 'Next'].filter((f) => !name.startsWith(f)).join('|'));

describe.each(Object.entries(frameworks))('%s recipe', (name, framework) => {
  let app: Running;
  beforeAll(async () => {
    app = await framework.recipe();
  });
  afterAll(() => app.close());

  test('signed push -> 200, and the callback saw the logistics', async () => {
    const result = await sandbox.pushLogistics(sampleLogistics, { url: app.url + '/webhooks/channel' });
    expect(result).toMatchObject({ ok: true, status: 200 });
    expect(saved).toEqual([sampleLogistics]);
  });

  test('tampered push -> 401, callback not called', async () => {
    const output = captureConsole();
    const result = await sandbox.pushLogistics(sampleLogistics, { url: app.url + '/webhooks/channel', tamper: true });
    output.restore();
    expect(result.status).toBe(401);
    expect(saved).toEqual([]);
    expect(output.lines).toEqual([
      expect.stringMatching(/^warn \[channel-sdk\] webhook signature -> 401: the x-channel-webhook-signature header does not match the body/),
    ]);
  });

  test('a push near 1 MiB -> 200 (no 100 KB parser limit in the way); over 1 MiB -> 413', async () => {
    const big = largeLogistics(1000 * 1024);
    expect((await sandbox.pushLogistics(big, { url: app.url + '/webhooks/channel' })).status).toBe(200);
    expect(saved[0].shipments[0].events).toHaveLength(big.shipments[0].events!.length);
    const output = captureConsole();
    const tooBig = await sandbox.pushLogistics(largeLogistics(1100 * 1024), { url: app.url + '/webhooks/channel' });
    output.restore();
    expect(tooBig.status).toBe(413);
    expect(output.lines).toEqual([expect.stringMatching(/^warn \[channel-sdk\] webhook size -> 413/)]);
  });

  test('another JSON route in the same app is unaffected', async () => {
    const response = await fetch(app.url + '/api/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"order_no":"SO1","n":1}',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: { order_no: 'SO1', n: 1 } });
  });

  test('token route: the client SDK gets its token there, and a forced refresh after a 401', async () => {
    let calls: string[] = [];
    const client = createClient({
      baseUrl: sandbox.url,
      tokenProvider: async ({ forceRefresh }) => {
        const path = '/channel-token' + (forceRefresh ? '?force=1' : '');
        calls.push(path);
        const response = await fetch(app.url + path, { headers: { cookie: 'session=demo-session' } });
        expect(response.headers.get('cache-control')).toBe('no-store');
        return ((await response.json()) as { access_token: string }).access_token;
      },
    });
    await expect(client.get('/open/api/v1/sdk/orders')).resolves.toBeDefined();
    sandbox.expireTokens();
    await expect(client.get('/open/api/v1/sdk/orders')).resolves.toBeDefined();
    expect(calls).toEqual(['/channel-token', '/channel-token?force=1']);
    calls = [];
  });

  test('token route: nobody signed in -> 401', async () => {
    const response = await fetch(app.url + '/channel-token');
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'not signed in' });
  });

  // Up to twice the exchange's window for shared forced refreshes: the check waits one out per form.
  test('channel-sandbox check passes the token route and the webhook (the repeat is a warning: the recipe has no dedup)', { timeout: 60_000 }, async () => {
    const output = captureConsole(); // the recipe logs the refused pushes the check sends on purpose
    let token: CheckReport;
    let hook: CheckReport;
    try {
      token = await checkTokenRoute({ url: app.url + '/channel-token', sandbox, headers: { cookie: 'session=demo-session' } });
      hook = await checkWebhook({ url: app.url + '/webhooks/channel', secret });
    } finally {
      output.restore();
    }
    const byId = (report: CheckReport) => Object.fromEntries(report.checks.map((c) => [c.id, c.status === 'pass' ? c.status : `${c.status}: ${c.detail}`]));
    expect(byId(token)).toEqual({
      token: 'pass',
      shape: 'pass',
      cache: 'pass',
      'force-query': 'pass',
      'force-post': expect.stringMatching(/^skip: the route does not take POST \(HTTP 40[45]\)/), // the recipe mounts GET only
      rejected: 'pass',
      'no-store': 'pass',
      credentials: 'pass',
      cors: 'pass',
      'cross-site': 'pass',
      timing: expect.stringMatching(/^(pass|warn: )/), // a warning only on a machine slow enough to take 2 s
    });
    expect(byId(hook)).toEqual({
      signed: 'pass',
      'uppercase-hex': 'pass',
      tampered: 'pass',
      unsigned: 'pass',
      'bad-signatures': 'pass',
      'raw-bytes': 'pass',
      duplicate: 'warn: the repeat got HTTP 200 like a new push: whether the callback ran twice cannot be seen from outside',
      large: 'pass',
      timing: expect.stringMatching(/^(pass|warn: )/), // a warning only on a machine slow enough to take 4 s
    });
    expect([token.ok, hook.ok]).toEqual([true, true]);
    // Only the refusals the check provokes: forged pushes, and its cross-origin probe where the route reports one.
    expect(output.lines.filter((l) => !/^(warn \[channel-sdk\] webhook signature -> 401|error \[channel-sdk\] token route origin -> 403)/.test(l))).toEqual([]);
  });

  test(`body read by ${framework.parser} first -> 500 naming ${name.split(' ')[0]}'s fix`, async () => {
    const broken = await framework.parsedFirst();
    const output = captureConsole();
    try {
      const pushed = await sandbox.pushLogistics(sampleLogistics, { url: broken.url + '/webhooks/channel' });
      expect(pushed.status).toBe(500);
      const body = JSON.stringify({ event: 'logistics.updated', logistics: sampleLogistics });
      const headers = { 'content-type': 'application/json', 'x-channel-webhook-signature': await signWebhookBody(body, secret) };
      const response = await fetch(broken.url + '/webhooks/channel', { method: 'POST', headers, body });
      const { error } = (await response.json()) as { error: string };
      expect(response.status).toBe(500);
      expect(error).toMatch(framework.advice);
      expect(error).not.toMatch(otherFrameworks(name));
    } finally {
      output.restore();
      await broken.close();
    }
    expect(saved).toEqual([]);
    // One console.error line per push (the default reporter), naming the same fix.
    expect(output.lines).toHaveLength(2);
    for (const line of output.lines) expect(line).toMatch(new RegExp('^error \\[channel-sdk\\] webhook body -> 500: .*' + framework.advice.source));
  });
});
