import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, SignJWT } from 'jose';
import { afterEach, describe, expect, test } from 'vitest';
import { createClient, UnauthorizedError } from '../../src/index.js';
import { createTokenExchange, createWebhookHandler, referenceSign, toNodeHandler } from '../../src/server-node.js';
import { demoLogistics, SANDBOX_CODES, SANDBOX_PATHS, startSandbox, type Sandbox, type SandboxEvent } from '../../src/testing.js';
import { base64url } from '../helpers/fake-service.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});
async function sandboxWith(options: Parameters<typeof startSandbox>[0] = {}) {
  const sandbox = await startSandbox(options);
  closers.push(() => sandbox.close());
  return sandbox;
}
const tokensUrl = (s: Sandbox) => s.url + '/open/api/v1/sdk/tokens';

/** A token request signed with the reference scheme, optionally tampered with. */
async function signedTokenRequest(sandbox: Sandbox, body = '{"external_user_id":"u1"}', over: Record<string, string> = {}) {
  const headers = await referenceSign({ method: 'POST', url: tokensUrl(sandbox), path: '/open/api/v1/sdk/tokens', body, ...sandbox.credentials });
  return { headers: { ...headers, 'Content-Type': 'application/json', ...over }, body };
}
const post = async (sandbox: Sandbox, request: { headers: Record<string, string>; body: string }) => {
  const response = await fetch(tokensUrl(sandbox), { method: 'POST', ...request });
  return { status: response.status, body: (await response.json()) as { code: number; message?: string; data?: { access_token: string } } };
};

describe('token endpoint', () => {
  test('issues a real JWT (sub, iat, exp, jti) through createTokenExchange', async () => {
    const sandbox = await sandboxWith({ tokenTtlSeconds: 120 });
    const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
    const token = await exchange.getToken('用户-1');
    expect(token.expiresIn).toBe(120);
    const claims = decodeJwt(token.accessToken);
    expect(claims.sub).toBe('用户-1');
    expect((claims.exp as number) - (claims.iat as number)).toBe(120);
    expect(claims.jti).toBe('1');
    expect(sandbox.stats).toMatchObject({ tokenCalls: 1, tokensIssued: 1, tokenRejections: 0 });
  });

  test('refuses a bad signature, an unknown key, a stale timestamp and a replayed nonce', async () => {
    const sandbox = await sandboxWith();
    const good = await signedTokenRequest(sandbox);
    expect((await post(sandbox, { ...good, headers: { ...good.headers, 'X-Channel-Signature': 'ab'.repeat(32) } })).body).toMatchObject({ code: SANDBOX_CODES.badSignature });
    expect((await post(sandbox, { ...good, body: '{"external_user_id":"u2"}' })).status).toBe(401); // body changed after signing
    expect((await post(sandbox, { ...good, headers: { ...good.headers, 'X-Channel-Key': 'someone-else' } })).body).toMatchObject({ code: SANDBOX_CODES.unknownKey });
    expect((await post(sandbox, good)).status).toBe(200);
    expect((await post(sandbox, good)).body).toMatchObject({ code: SANDBOX_CODES.replayedNonce });
    const early = await startSandbox({ credentials: sandbox.credentials, now: () => Date.now() + 301_000 });
    closers.push(() => early.close());
    const stale = await signedTokenRequest(early);
    const response = await fetch(early.url + '/open/api/v1/sdk/tokens', { method: 'POST', ...stale });
    expect(await response.json()).toMatchObject({ code: SANDBOX_CODES.staleTimestamp, message: 'timestamp outside the ±300 s window' });
    expect(sandbox.stats.tokenRejections).toBe(4);
  });

  test.each([
    ['an empty id', '{"external_user_id":""}'],
    ['129 characters', JSON.stringify({ external_user_id: 'x'.repeat(129) })],
    ['no id', '{}'],
    ['a number', '{"external_user_id":7}'],
    ['not JSON', 'external_user_id=u1'],
  ])('body rules: %s -> 400', async (_label, body) => {
    const sandbox = await sandboxWith();
    const { status, body: answer } = await post(sandbox, await signedTokenRequest(sandbox, body));
    expect(status).toBe(400);
    expect([SANDBOX_CODES.invalidUserId, SANDBOX_CODES.badRequest]).toContain(answer.code);
  });

  test('128 characters (code points) are accepted', async () => {
    const sandbox = await sandboxWith();
    expect((await post(sandbox, await signedTokenRequest(sandbox, JSON.stringify({ external_user_id: '😀'.repeat(128) })))).status).toBe(200);
  });
});

describe('data routes', () => {
  const get = (sandbox: Sandbox, token?: string) =>
    fetch(sandbox.url + SANDBOX_PATHS.orders, { headers: token === undefined ? {} : { authorization: token } }).then(async (r) => ({ status: r.status, body: await r.json() }));

  test('a valid Bearer JWT gets data; missing, expired, tampered, alg none, foreign and console tokens get 401', async () => {
    let clock = Date.now();
    const sandbox = await sandboxWith({ tokenTtlSeconds: 60, now: () => clock });
    const token = await sandbox.issueToken('u1');
    expect((await get(sandbox, 'Bearer ' + token)).body).toMatchObject({ code: 0, data: { orders: [{ order_no: 'SO20240601001' }, { order_no: 'SO20240602002' }] } });
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = [
      ['missing', undefined],
      ['not Bearer', token],
      ['tampered payload', `Bearer ${header}.${base64url(JSON.stringify({ ...claims, sub: 'admin' }))}.${signature}`],
      ['alg none', `Bearer ${base64url('{"alg":"none","typ":"JWT"}')}.${payload}.`],
      ['foreign key', 'Bearer ' + (await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('another-key-another-key-another!')))],
      ['console-style token', 'Bearer console-session-9f8e7d6c'],
    ] as const;
    for (const [label, value] of forged) {
      expect({ label, status: (await get(sandbox, value)).status }).toEqual({ label, status: 401 });
    }
    clock += 61_000;
    expect((await get(sandbox, 'Bearer ' + token)).body).toMatchObject({ code: SANDBOX_CODES.unauthorized, message: 'token expired' });
    expect(sandbox.stats.unauthorized).toBe(forged.length + 1);
  });

  test('expireTokens() and failNext(n)', async () => {
    const sandbox = await sandboxWith();
    const old = await sandbox.issueToken('u1');
    sandbox.expireTokens();
    expect((await get(sandbox, 'Bearer ' + old)).status).toBe(401);
    const fresh = await sandbox.issueToken('u1');
    expect((await get(sandbox, 'Bearer ' + fresh)).status).toBe(200);
    sandbox.failNext(2);
    expect((await get(sandbox, 'Bearer ' + fresh)).status).toBe(401);
    expect((await get(sandbox, 'Bearer ' + fresh)).status).toBe(401);
    expect((await get(sandbox, 'Bearer ' + fresh)).status).toBe(200);
  });

  test('the SDK end to end: exchange -> Bearer -> expiry -> one forced refresh -> replay', async () => {
    const events: SandboxEvent[] = [];
    const sandbox = await sandboxWith({ onEvent: (e) => events.push(e) });
    const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
    const client = createClient({
      baseUrl: sandbox.url,
      tokenProvider: async ({ forceRefresh }) => (await exchange.getToken('u1', { forceRefresh })).accessToken,
    });
    await expect(client.get(SANDBOX_PATHS.logistics, { searchParams: { order_no: 'SO20240601001' } })).resolves.toEqual(demoLogistics[0]);
    sandbox.expireTokens();
    const results = await Promise.all([client.get(SANDBOX_PATHS.orders), client.post(SANDBOX_PATHS.echo, { json: { n: 1 } }), client.get(SANDBOX_PATHS.orders)]);
    expect(results[1]).toEqual({ method: 'POST', body: '{"n":1}' });
    expect(sandbox.stats.tokensIssued).toBe(2);
    expect(events.filter((e) => e.type === 'data').map((e) => (e as { status: number }).status)).toEqual([200, 401, 401, 401, 200, 200, 200]);
    sandbox.failNext(2);
    await expect(client.get(SANDBOX_PATHS.orders)).rejects.toBeInstanceOf(UnauthorizedError);
  });
});

describe('pushLogistics', () => {
  async function receiver(status?: number, delayMs = 0) {
    const received: string[] = [];
    const webhook = createWebhookHandler({ secret: 'whsec_test', onLogisticsUpdated: (e) => void received.push(e.logistics.order_no), onError: () => {} });
    const node = toNodeHandler(webhook);
    const server: Server = createServer((req, res) => {
      if (status) return void setTimeout(() => res.writeHead(status).end(), delayMs);
      node(req, res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => { server.closeAllConnections(); server.close(r); }));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
  }

  test('signed push -> receiver verifies it -> ok; tampered -> 401 recorded as failure', async () => {
    const hook = await receiver();
    const sandbox = await sandboxWith({ webhookUrl: hook.url, webhookSecret: 'whsec_test' });
    expect(await sandbox.pushLogistics(demoLogistics[0])).toMatchObject({ ok: true, status: 200 });
    expect(hook.received).toEqual(['SO20240601001']);
    expect(await sandbox.pushLogistics(demoLogistics[1], { tamper: true })).toMatchObject({ ok: false, status: 401, error: 'HTTP 401' });
    expect(hook.received).toHaveLength(1);
    expect(sandbox.pushes.map((p) => [p.ok, p.tampered, p.signed])).toEqual([
      [true, false, true],
      [false, true, true],
    ]);
    expect(sandbox.stats).toMatchObject({ pushes: 2, pushFailures: 1 });
  });

  test('a 500 receiver, a slow one and an absent one are failures with the reason', async () => {
    const failing = await receiver(500);
    const slow = await receiver(200, 300);
    const sandbox = await sandboxWith({ webhookUrl: failing.url, webhookSecret: 'whsec_test', webhookTimeoutMs: 100 });
    expect(await sandbox.pushLogistics(demoLogistics[0])).toMatchObject({ ok: false, status: 500, error: 'HTTP 500' });
    expect(await sandbox.pushLogistics(demoLogistics[0], { url: slow.url })).toMatchObject({ ok: false, error: 'timeout after 100 ms' });
    const refused = await sandbox.pushLogistics(demoLogistics[0], { url: 'http://127.0.0.1:9/hook' });
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(/^connection failed/);
  });

  test('with no secret the push carries no signature header', async () => {
    let header: string | undefined = 'unset';
    const server = createServer((req, res) => {
      header = req.headers['x-channel-webhook-signature'] as string | undefined;
      res.writeHead(204).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => server.close(r)));
    const sandbox = await sandboxWith({ webhookUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    expect((await sandbox.pushLogistics(demoLogistics[0])).ok).toBe(true);
    expect(header).toBeUndefined();
  });
});

test('CLI: prints the URL and credentials; refuses bad arguments', async () => {
  const child = spawn(process.execPath, ['dist/sandbox-cli.js', '--port', '0', '--ttl', '30', '--access-key', 'ak1', '--secret-key', 'sk1']);
  const out = await new Promise<string>((resolve) => {
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
      if (text.includes('Ctrl+C')) resolve(text);
    });
  });
  const url = /listening on (http:\/\/\S+)/.exec(out)![1];
  const exchange = createTokenExchange({ baseUrl: url, accessKey: 'ak1', secretKey: 'sk1' });
  expect((await exchange.getToken('cli-user')).expiresIn).toBe(30);
  child.kill('SIGINT');
  const bad = spawn(process.execPath, ['dist/sandbox-cli.js', '--ttl', '0']);
  let err = '';
  bad.stderr.on('data', (d) => (err += d));
  const code = await new Promise((r) => bad.on('close', r));
  expect(code).toBe(2);
  expect(err).toMatch(/--ttl must be a positive number of seconds/);
});
