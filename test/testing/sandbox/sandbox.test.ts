import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, SignJWT } from 'jose';
import { describe, expect, test } from 'vitest';
import { createClient, UnauthorizedError } from '../../../src/index.js';
import { createTokenExchange, referenceSign } from '../../../src/server-node.js';
import { signReference } from '../../../src/server/tokens/signing.js';
import { nodeCrypto } from '../../../src/server/crypto/node.js';
import { demoLogistics, SANDBOX_CODES, SANDBOX_PATHS, type Sandbox, type SandboxEvent } from '../../../src/testing.js';
import { MAX_BODY_BYTES } from '../../../src/testing/http-io.js';
import { closers, receiver, sandboxWith } from '../helpers.js';
import { base64url } from '../../helpers/fake-service.js';

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

  test('refuses a bad signature, a changed body, an unknown key and a replayed nonce', async () => {
    const sandbox = await sandboxWith();
    const good = await signedTokenRequest(sandbox);
    expect((await post(sandbox, { ...good, headers: { ...good.headers, 'X-Channel-Signature': 'ab'.repeat(32) } })).body).toMatchObject({
      code: SANDBOX_CODES.badSignature,
    });
    expect((await post(sandbox, { ...good, body: '{"external_user_id":"u2"}' })).status).toBe(401); // body changed after signing
    expect((await post(sandbox, { ...good, headers: { ...good.headers, 'X-Channel-Key': 'someone-else' } })).body).toMatchObject({
      code: SANDBOX_CODES.unknownKey,
    });
    expect((await post(sandbox, good)).status).toBe(200);
    expect((await post(sandbox, good)).body).toMatchObject({ code: SANDBOX_CODES.replayedNonce });
    expect(sandbox.stats.tokenRejections).toBe(4);
  });

  test("the timestamp window is symmetric: -300 s and +300 s pass, -301 s and +301 s fail, whatever the sandbox clock's milliseconds", async () => {
    for (const ms of [0, 500, 999]) {
      const clock = Date.UTC(2026, 0, 1, 12) + ms;
      const sandbox = await sandboxWith({ now: () => clock });
      const at = async (offsetSeconds: number) => {
        const body = '{"external_user_id":"u1"}';
        const signedAt = Math.floor(clock / 1000) * 1000 + offsetSeconds * 1000;
        const headers = await signReference(
          nodeCrypto,
          { method: 'POST', url: tokensUrl(sandbox), path: '/open/api/v1/sdk/tokens', body, ...sandbox.credentials },
          signedAt,
        );
        const { status, body: answer } = await post(sandbox, { headers: { ...headers, 'Content-Type': 'application/json' }, body });
        return status === 200 ? 'accepted' : answer.code === SANDBOX_CODES.staleTimestamp ? 'outside the window' : 'other ' + answer.code;
      };
      expect({ ms, edges: [await at(-301), await at(-300), await at(0), await at(300), await at(301)] }).toEqual({
        ms,
        edges: ['outside the window', 'accepted', 'accepted', 'accepted', 'outside the window'],
      });
    }
  });

  test('a nonce is refused for as long as its request could pass the window, and forgotten after', async () => {
    let clock = Date.UTC(2026, 0, 1, 12);
    const sandbox = await sandboxWith({ now: () => clock });
    const body = '{"external_user_id":"u1"}';
    // Signed 300 s ahead: valid until the sandbox's clock reaches its timestamp + 300 s.
    const headers = await signReference(
      nodeCrypto,
      { method: 'POST', url: tokensUrl(sandbox), path: '/open/api/v1/sdk/tokens', body, ...sandbox.credentials },
      clock + 300_000,
    );
    const request = { headers: { ...headers, 'Content-Type': 'application/json' }, body };
    expect((await post(sandbox, request)).status).toBe(200);
    clock += 600_000;
    expect((await post(sandbox, request)).body.code).toBe(SANDBOX_CODES.replayedNonce);
    clock += 1000;
    expect((await post(sandbox, request)).body.code).toBe(SANDBOX_CODES.staleTimestamp);
  });

  test('a body over 1 MiB gets 413 while it is read, before any signature work; the token endpoint sends no CORS headers', async () => {
    const events: SandboxEvent[] = [];
    const sandbox = await sandboxWith({ onEvent: (e) => events.push(e) });
    const big = Buffer.alloc(MAX_BODY_BYTES + 1, 97);
    const declared = await fetch(tokensUrl(sandbox), { method: 'POST', body: big });
    expect([declared.status, await declared.json()]).toEqual([413, { code: SANDBOX_CODES.tooLarge, message: 'body larger than 1 MiB' }]);
    const chunks = Array.from({ length: 17 }, () => new Uint8Array(64 * 1024));
    const chunked = await fetch(tokensUrl(sandbox), {
      method: 'POST',
      body: new ReadableStream({ pull: (c) => void (chunks.length ? c.enqueue(chunks.pop()) : c.close()) }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(chunked.headers.get('access-control-allow-origin')).toBeNull();
    expect(sandbox.stats.tokenCalls).toBe(0);
    expect(events).toEqual([]);
    const data = await fetch(sandbox.url + SANDBOX_PATHS.echo, { method: 'POST', body: big });
    expect([data.status, data.headers.get('access-control-allow-origin')]).toEqual([413, '*']);
    // Exactly 1 MiB is fine (and then needs a token).
    expect((await fetch(sandbox.url + SANDBOX_PATHS.echo, { method: 'POST', body: big.subarray(1) })).status).toBe(401);
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
    fetch(sandbox.url + SANDBOX_PATHS.orders, { headers: token === undefined ? {} : { authorization: token } }).then(async (r) => ({
      status: r.status,
      body: await r.json(),
    }));

  test('a valid Bearer JWT gets data; missing, expired, tampered, alg none, foreign and console tokens get 401', async () => {
    let clock = Date.now();
    const sandbox = await sandboxWith({ tokenTtlSeconds: 60, now: () => clock });
    const token = await sandbox.issueToken('u1');
    expect((await get(sandbox, 'Bearer ' + token)).body).toMatchObject({
      code: 0,
      data: { orders: [{ order_no: 'SO20240601001' }, { order_no: 'SO20240602002' }] },
    });
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const notBearer = 'not a Bearer JWT (a console login token is not accepted)';
    const invalid = 'signature invalid (tampered or foreign token)';
    const forged = [
      ['missing', undefined, 'missing Authorization header'],
      ['not Bearer', token, notBearer],
      ['tampered payload', `Bearer ${header}.${base64url(JSON.stringify({ ...claims, sub: 'admin' }))}.${signature}`, invalid],
      ['signature with a stray character', `Bearer ${token}x`, invalid],
      ['alg none', `Bearer ${base64url('{"alg":"none","typ":"JWT"}')}.${payload}.`, 'algorithm not allowed'],
      [
        'foreign key',
        'Bearer ' + (await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('another-key-another-key-another!'))),
        invalid,
      ],
      ['console-style token', 'Bearer console-session-9f8e7d6c', notBearer],
      ['three parts of garbage', 'Bearer x.y.z', notBearer],
    ] as const;
    for (const [label, value, reason] of forged) {
      const { status, body } = await get(sandbox, value);
      expect({ label, status, body }).toEqual({ label, status: 401, body: { code: SANDBOX_CODES.unauthorized, message: reason } });
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
    const results = await Promise.all([
      client.get(SANDBOX_PATHS.orders),
      client.post(SANDBOX_PATHS.echo, { json: { n: 1 } }),
      client.get(SANDBOX_PATHS.orders),
    ]);
    expect(results[1]).toEqual({ method: 'POST', body: '{"n":1}' });
    expect(sandbox.stats.tokensIssued).toBe(2);
    expect(events.filter((e) => e.type === 'data').map((e) => (e as { status: number }).status)).toEqual([200, 401, 401, 401, 200, 200, 200]);
    sandbox.failNext(2);
    await expect(client.get(SANDBOX_PATHS.orders)).rejects.toBeInstanceOf(UnauthorizedError);
  });
});

describe("the sandbox's own data routes (every path and id the README uses)", () => {
  async function signedIn() {
    const sandbox = await sandboxWith();
    const token = await sandbox.issueToken('u1');
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(sandbox.url + path, {
        method,
        headers: { authorization: 'Bearer ' + token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: r.status, body: (await r.json()) as { code: number; message?: string; data?: Record<string, unknown> } };
    };
    return { sandbox, call };
  }

  test('orders: list, one by number, unknown -> 404 envelope', async () => {
    const { call } = await signedIn();
    expect((await call('GET', '/open/api/v1/sdk/orders')).body.data).toMatchObject({ orders: [{ order_no: 'SO20240601001' }, { order_no: 'SO20240602002' }] });
    expect(await call('GET', '/open/api/v1/sdk/orders/SO20240601001')).toMatchObject({
      status: 200,
      body: { code: 0, data: { order_no: 'SO20240601001', partner_order_no: 'P-10001', status: 'shipped' } },
    });
    expect(await call('GET', '/open/api/v1/sdk/orders/SO20240602002')).toMatchObject({
      status: 200,
      body: { data: { order_no: 'SO20240602002', status: 'delivered' } },
    });
    expect(await call('GET', '/open/api/v1/sdk/orders/SO1')).toEqual({ status: 404, body: { code: SANDBOX_CODES.notFound, message: 'no order SO1' } });
    expect(await call('DELETE', '/open/api/v1/sdk/orders/SO20240601001')).toMatchObject({ status: 405, body: { code: SANDBOX_CODES.methodNotAllowed } });
  });

  test('an unknown path gets a 404 that quotes it, and names a baseUrl path given twice (a first mistake)', async () => {
    const { call } = await signedIn();
    const doubled = await call('GET', '/open/api/v1/sdk/open/api/v1/sdk/orders');
    expect(doubled.status).toBe(404);
    expect(doubled.body.message).toMatch(
      /^no route "\/open\/api\/v1\/sdk\/open\/api\/v1\/sdk\/orders": "\/open\/api\/v1\/sdk" comes before \/open\/api\/v1\/sdk\/; is it in baseUrl too\? .*; the sandbox serves \/open\/api\/v1\/sdk\/orders, /,
    );
    const other = await call('GET', '/orders');
    expect(other.body.message).toMatch(/^no route "\/orders"; the sandbox serves \/open\/api\/v1\/sdk\/orders, /);
  });

  test('POST orders creates an order in memory; a bad body gets a 400 envelope that says what to send', async () => {
    const { call } = await signedIn();
    // The README's example body, and one with the optional fields.
    expect(await call('POST', '/open/api/v1/sdk/orders', { partner_order_no: 'P-20001' })).toMatchObject({
      status: 200,
      body: { code: 0, data: { partner_order_no: 'P-20001', status: 'created' } },
    });
    const created = await call('POST', '/open/api/v1/sdk/orders', { partner_order_no: 'P-20002', sku: 'A1', qty: 2 });
    expect(created).toMatchObject({ status: 200, body: { code: 0, data: { partner_order_no: 'P-20002', sku: 'A1', qty: 2, status: 'created' } } });
    const orderNo = created.body.data?.order_no as string;
    expect(orderNo).toMatch(/^SO\d{8}\d{3}$/);
    expect((await call('GET', '/open/api/v1/sdk/orders/' + orderNo)).body.data).toEqual(created.body.data);
    expect((await call('GET', '/open/api/v1/sdk/logistics?order_no=' + orderNo)).body.data).toEqual({
      order_no: orderNo,
      partner_order_no: 'P-20002',
      shipments: [],
    });
    expect((await call('GET', '/open/api/v1/sdk/orders')).body.data).toMatchObject({ orders: [{}, {}, {}, { order_no: orderNo }] });
    expect(await call('POST', '/open/api/v1/sdk/orders', { sku: '', qty: 0 })).toEqual({
      status: 400,
      body: {
        code: SANDBOX_CODES.badRequest,
        message:
          'partner_order_no: your order number, a non-empty string of at most 64 characters, is required; sku: a non-empty string of at most 64 characters when given; qty: a whole number from 1 to 999 when given',
      },
    });
    expect((await call('POST', '/open/api/v1/sdk/orders', 'partner_order_no=P-1')).body.message).toMatch(/^the body must be JSON like/);
    expect((await call('POST', '/open/api/v1/sdk/orders', [1])).body.message).toMatch(/^the body must be a JSON object/);
  });

  test('logistics by order_no (and 400 without one), echo', async () => {
    const { call } = await signedIn();
    expect((await call('GET', '/open/api/v1/sdk/logistics?order_no=SO20240601001')).body.data).toEqual(demoLogistics[0]);
    expect((await call('GET', '/open/api/v1/sdk/logistics?order_no=SO20240602002')).body.data).toEqual(demoLogistics[1]);
    expect((await call('GET', '/open/api/v1/sdk/logistics')).status).toBe(400);
    expect((await call('POST', '/open/api/v1/sdk/echo', { hello: 'world' })).body.data).toEqual({ method: 'POST', body: '{"hello":"world"}' });
    expect((await call('GET', '/open/api/v1/sdk/nowhere')).body.message).toContain('/open/api/v1/sdk/orders/{order_no}');
  });

  test('CORS: a preflight gets the headers it asks for; answers expose Retry-After; the token endpoint answers no CORS at all', async () => {
    const sandbox = await sandboxWith();
    const preflight = (path: string, headers: string) =>
      fetch(sandbox.url + path, {
        method: 'OPTIONS',
        headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': headers },
      });
    const ok = await preflight(SANDBOX_PATHS.echo, 'authorization,content-type,x-app-version');
    expect([ok.status, ok.headers.get('access-control-allow-origin'), ok.headers.get('access-control-allow-headers')]).toEqual([
      204,
      '*',
      'authorization,content-type,x-app-version',
    ]);
    expect(ok.headers.get('access-control-allow-methods')).toContain('POST');
    // A malformed list is not echoed back.
    expect((await preflight(SANDBOX_PATHS.echo, 'x-a\tb, (bad)')).headers.get('access-control-allow-headers')).toBe('authorization, content-type');
    sandbox.failNext(1, { status: 503, retryAfterSeconds: 2 });
    const busy = await fetch(sandbox.url + SANDBOX_PATHS.orders);
    expect([busy.status, busy.headers.get('retry-after'), busy.headers.get('access-control-expose-headers')]).toEqual([503, '2', 'Retry-After, Date']);
    expect(await busy.json()).toEqual({ code: 50390, message: 'failNext' });
    const token = await preflight('/open/api/v1/sdk/tokens', 'content-type,x-channel-key');
    expect(token.status).toBe(405);
    expect([...token.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([]);
    const direct = await fetch(tokensUrl(sandbox), { method: 'POST', headers: { origin: 'http://localhost:5173' }, body: '{}' });
    expect([...direct.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });

  test('a page that adds its own header works through the SDK in a browser-like fetch (retries 503 with Retry-After too)', async () => {
    const sandbox = await sandboxWith();
    const client = createClient({
      baseUrl: sandbox.url,
      tokenProvider: () => sandbox.issueToken('u1'),
      headers: { 'x-app-version': '1.2.3' },
      retry: { limit: 1 },
    });
    sandbox.failNext(1, { status: 503, retryAfterSeconds: 0 });
    await expect(client.get('/open/api/v1/sdk/orders/SO20240601001')).resolves.toMatchObject({ order_no: 'SO20240601001' });
    await expect(client.post('/open/api/v1/sdk/orders', { json: { partner_order_no: 'P-20001' } })).resolves.toMatchObject({
      partner_order_no: 'P-20001',
      status: 'created',
    });
  });
});

describe('pushLogistics', () => {
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
    const failing = await receiver({ status: 500 });
    // A second for the 500 (a busy machine can take more than 100 ms to answer at once), three for the slow one.
    const slow = await receiver({ status: 200, delayMs: 3000 });
    const sandbox = await sandboxWith({ webhookUrl: failing.url, webhookSecret: 'whsec_test', webhookTimeoutMs: 1000 });
    expect(await sandbox.pushLogistics(demoLogistics[0])).toMatchObject({ ok: false, status: 500, error: 'HTTP 500' });
    expect(await sandbox.pushLogistics(demoLogistics[0], { url: slow.url })).toMatchObject({ ok: false, error: 'timeout after 1000 ms' });
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
