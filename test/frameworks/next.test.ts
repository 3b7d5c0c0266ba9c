/**
 * The Next.js recipes (examples/backend/nextjs: App Router and Pages Router) as a partner runs them:
 * `next build` WITHOUT the secrets in the environment (CI builds rarely have them), then
 * `next start` with them, driven by the sandbox. The project is a copy under .tmp/ with the
 * built package in its node_modules, plus a few test-only routes (a misconfigured Pages route
 * and plain JSON routes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { createClient } from 'channel-sdk';
import { signWebhookBody } from 'channel-sdk/server';
import { checkTokenRoute, checkWebhook, startSandbox, type CheckReport, type Sandbox } from 'channel-sdk/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { largeLogistics, sampleLogistics } from '../server/helpers.js';
import { stall } from '../server/webhooks/stalled.js';

const root = resolve(import.meta.dirname, '../..');
const nextBin = createRequire(join(root, 'package.json')).resolve('next/dist/bin/next');
const secret = 'whsec_next';

let work: string;
let project: string;
let sandbox: Sandbox;
const servers: ChildProcess[] = [];

const testOnlyRoutes: Record<string, string> = {
  // The webhook route without `config.api.bodyParser = false`: Next parses the body first.
  'pages/api/webhooks/parsed.ts':
    "import { toNodeHandler } from 'channel-sdk/server';\nimport { webhook } from '@/channel';\n\nexport default toNodeHandler(webhook);\n",
  // Plain JSON routes of the same app.
  'pages/api/orders.ts':
    "import type { NextApiRequest, NextApiResponse } from 'next';\n\nexport default function orders(req: NextApiRequest, res: NextApiResponse) {\n  res.json({ received: req.body });\n}\n",
  'app/api/echo/route.ts': 'export async function POST(request: Request) {\n  return Response.json({ received: await request.json() });\n}\n',
  // TypeScript 7 in this repository has no JS API for Next's own type check; tsconfig.examples
  // and examples/backend/nextjs/tsconfig.json type-check these files in `npm test` instead.
  'next.config.mjs': 'export default { typescript: { ignoreBuildErrors: true } };\n',
  'package.json': '{ "private": true }\n',
  // Turbopack does not map an import of ./x.js to x.ts yet (vercel/next.js#82945); the shared
  // examples/backend/channel.ts imports its stand-ins NodeNext-style, so the copy gets a .js shim.
  '../your-app.js': "export * from './your-app.ts';\n",
};

function run(args: string[], environment: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [nextBin, ...args], { cwd: project, env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => done({ code, output }));
  });
}

/** The environment of a partner's server, without anything of this test process's own. */
function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production', ...extra };
}

function start(extra: Record<string, string>): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [nextBin, 'start', '-p', '0', '-H', '127.0.0.1'], {
      cwd: project,
      env: env(extra),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    servers.push(child);
    let output = '';
    const timer = setTimeout(() => fail(new Error('next start did not come up:\n' + output)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      const url = /http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (url && /Ready/.test(output)) {
        clearTimeout(timer);
        done(`http://127.0.0.1:${url[1]}`);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => fail(new Error(`next start exited (${code}):\n${output}`)));
  });
}

const savedFile = () => join(work, 'saved.ndjson');
const saved = (): unknown[] =>
  existsSync(savedFile())
    ? readFileSync(savedFile(), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];

let built: { code: number | null; output: string };
let app: string;

beforeAll(async () => {
  mkdirSync(join(root, '.tmp'), { recursive: true });
  work = mkdtempSync(join(root, '.tmp', 'next-'));
  // The examples as they are, plus the built package as an installed dependency.
  cpSync(join(root, 'examples', 'backend'), join(work, 'backend'), { recursive: true, filter: (source) => !source.includes('.next') });
  project = join(work, 'backend', 'nextjs');
  for (const [file, text] of Object.entries(testOnlyRoutes)) {
    mkdirSync(join(project, file, '..'), { recursive: true });
    writeFileSync(join(project, file), text);
  }
  const installed = join(work, 'node_modules', 'channel-sdk');
  mkdirSync(installed, { recursive: true });
  cpSync(join(root, 'package.json'), join(installed, 'package.json'));
  cpSync(join(root, 'dist'), join(installed, 'dist'), { recursive: true });

  built = await run(['build'], env({}));
  if (built.code !== 0) return;
  sandbox = await startSandbox({ webhookSecret: secret });
  app = await start({
    CHANNEL_WEBHOOK_SECRET: secret,
    CHANNEL_BASE_URL: sandbox.url,
    CHANNEL_ACCESS_KEY: sandbox.credentials.accessKey,
    CHANNEL_SECRET_KEY: sandbox.credentials.secretKey,
    EXAMPLES_SAVED_FILE: savedFile(),
  });
});

afterAll(async () => {
  for (const child of servers) child.kill();
  await sandbox?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

test('next build succeeds without the secrets in the environment', () => {
  expect({ code: built.code, output: built.code === 0 ? '' : built.output }).toEqual({ code: 0, output: '' });
  expect(built.output).toMatch(/\/webhooks\/channel/);
  expect(built.output).toMatch(/\/api\/webhooks\/channel/);
});

test("Next's generated route type checks pass (tsc over .next/types, strict, exactOptionalPropertyTypes)", async () => {
  // next build rewrote the copy's tsconfig.json to include .next/types/validator.ts, which
  // checks every route file's exports against Next's own handler types.
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = await new Promise<{ code: number | null; output: string }>((done) => {
    const child = spawn(process.execPath, [tsc, '-p', 'tsconfig.json', '--incremental', 'false'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => done({ code, output }));
  });
  expect(readFileSync(join(project, 'tsconfig.json'), 'utf8')).toContain('.next/types/**/*.ts');
  expect(result).toEqual({ code: 0, output: '' });
});

describe.each([
  ['App Router', '/webhooks/channel', '/channel-token', '/api/echo'],
  ['Pages Router', '/api/webhooks/channel', '/api/channel-token', '/api/orders'],
])('Next.js %s recipe (next start)', (_router, hook, token, orders) => {
  test('signed push -> 200, and the callback saw the logistics', async () => {
    const before = saved().length;
    expect(await sandbox.pushLogistics(sampleLogistics, { url: app + hook })).toMatchObject({ ok: true, status: 200 });
    expect(saved().slice(before)).toEqual([sampleLogistics]);
  });

  test('tampered push -> 401, callback not called', async () => {
    const before = saved().length;
    expect((await sandbox.pushLogistics(sampleLogistics, { url: app + hook, tamper: true })).status).toBe(401);
    expect(saved()).toHaveLength(before);
  });

  test('a push near 1 MiB -> 200', async () => {
    expect((await sandbox.pushLogistics(largeLogistics(1000 * 1024), { url: app + hook })).status).toBe(200);
  });

  test('a body that stalls -> 408 at the default 8 s (bodyTimeoutMs), and the connection is closed', async () => {
    const client = await stall(Number(new URL(app).port), 1000, 10, hook);
    try {
      await expect.poll(() => client.closed, { timeout: 30_000, interval: 100 }).toBe(true);
    } finally {
      client.socket.destroy();
    }
    expect(client.status).toBe(408);
  });

  test('another JSON route in the same app is unaffected', async () => {
    const response = await fetch(app + orders, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"order_no":"SO1"}' });
    expect(await response.json()).toEqual({ received: { order_no: 'SO1' } });
  });

  test('token route: the client SDK gets its token there, and a forced refresh after a 401', async () => {
    const calls: string[] = [];
    const client = createClient({
      baseUrl: sandbox.url,
      tokenProvider: async ({ forceRefresh }) => {
        const path = token + (forceRefresh ? '?force=1' : '');
        calls.push(path);
        const response = await fetch(app + path, { headers: { cookie: 'session=demo-session' } });
        return ((await response.json()) as { access_token: string }).access_token;
      },
    });
    await expect(client.get('/open/api/v1/sdk/orders')).resolves.toBeDefined();
    sandbox.expireTokens();
    await expect(client.get('/open/api/v1/sdk/orders')).resolves.toBeDefined();
    expect(calls).toEqual([token, token + '?force=1']);
    expect((await fetch(app + token)).status).toBe(401);
  });

  test('channel-sandbox check passes the token route and the webhook (the repeat is a warning: the recipe has no dedup)', async () => {
    const route = await checkTokenRoute({ url: app + token, sandbox, headers: { cookie: 'session=demo-session' } });
    const receiver = await checkWebhook({ url: app + hook, secret });
    const failed = (report: CheckReport) => report.checks.filter((c) => c.status === 'fail').map((c) => `${c.id}: ${c.detail}`);
    expect({ route: failed(route), receiver: failed(receiver) }).toEqual({ route: [], receiver: [] });
    // App Router: the recipe exports GET only (405 to a POST); Pages Router: its handler takes POST too.
    expect(route.checks.find((c) => c.id === 'force-post')?.status).toBe(_router === 'App Router' ? 'skip' : 'pass');
    expect(receiver.checks.filter((c) => c.status === 'warn').map((c) => c.id)).toEqual(expect.arrayContaining(['duplicate']));
  });
});

test("Pages Router with Next's default body parser -> 500 naming Next's fix (bodyParser: false)", async () => {
  const body = JSON.stringify({ event: 'logistics.updated', logistics: sampleLogistics });
  const response = await fetch(app + '/api/webhooks/parsed', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-channel-webhook-signature': await signWebhookBody(body, secret) },
    body,
  });
  const { error } = (await response.json()) as { error: string };
  expect(response.status).toBe(500);
  expect(error).toMatch(/Next\.js Pages Router: .*export const config = \{ api: \{ bodyParser: false \} \}/);
  expect(error).not.toMatch(/Express|Fastify|Koa|Hono/);
});

test('started without the webhook secret: pushes get 500, never accepted unsigned', async () => {
  const bare = await start({});
  const body = JSON.stringify({ event: 'logistics.updated', logistics: sampleLogistics });
  for (const path of ['/webhooks/channel', '/api/webhooks/channel']) {
    const response = await fetch(bare + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect([response.status, await response.json()]).toEqual([500, { error: 'webhook secret not configured' }]);
  }
});
