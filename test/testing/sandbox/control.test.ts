import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from 'vitest';
import { createClient } from '../../../src/index.js';
import { createTokenExchange } from '../../../src/server-node.js';
import { SANDBOX_PATHS, type SandboxEvent, type SandboxOptions } from '../../../src/testing.js';
import { startSandbox as startBare } from '../../../src/testing.js';
import { closers, receiver, sandboxWith as startSandbox } from '../helpers.js';

async function sandboxWith(options: SandboxOptions = {}) {
  const sandbox = await startSandbox(options);
  const control = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(sandbox.url + '/__sandbox/' + route, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  return { sandbox, control };
}

/** Reads a server-sent event stream (GET, or POST of `body` as JSON) into `events` until the test ends. */
async function stream(url: string, headers: Record<string, string> = {}, body?: unknown) {
  const abort = new AbortController();
  closers.push(async () => abort.abort());
  const response = await fetch(
    url,
    body === undefined
      ? { headers, signal: abort.signal }
      : { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal: abort.signal },
  );
  const events: Array<{ event: string; id?: string; data: Record<string, unknown> }> = [];
  void (async () => {
    let buffer = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += Buffer.from(chunk).toString();
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end).split('\n');
        buffer = buffer.slice(end + 2);
        const field = (name: string) => block.find((l) => l.startsWith(name + ': '))?.slice(name.length + 2);
        if (field('data')) events.push({ event: field('event') as string, id: field('id'), data: JSON.parse(field('data') as string) });
      }
    }
  })().catch(() => {});
  return { status: response.status, events, close: () => abort.abort() };
}
const until = async (check: () => boolean) => {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
};

describe("control API (the sandbox's own, under /__sandbox/)", () => {
  test('expire, fail-next, ttl, token and stats do what the Node API does', async () => {
    const { sandbox, control } = await sandboxWith();
    const before = await sandbox.issueToken('u1');
    expect(await control('POST', 'expire')).toEqual({ status: 200, body: { expired: 1 } });
    const get = (token: string) => fetch(sandbox.url + SANDBOX_PATHS.orders, { headers: { authorization: 'Bearer ' + token } }).then((r) => r.status);
    expect(await get(before)).toBe(401);
    const minted = await control('POST', 'token', { user: 'qa-1' });
    expect(minted.body).toMatchObject({ expires_in: 900, token_type: 'Bearer' });
    expect(await get(minted.body.access_token as string)).toBe(200);
    expect(await control('POST', 'fail-next', { count: 2 })).toEqual({ status: 200, body: { count: 2, status: 401 } });
    expect([
      await get(minted.body.access_token as string),
      await get(minted.body.access_token as string),
      await get(minted.body.access_token as string),
    ]).toEqual([401, 401, 200]);
    expect(await control('POST', 'ttl', { seconds: 60 })).toEqual({ status: 200, body: { tokenTtlSeconds: 60 } });
    expect((await control('POST', 'token', { user: 'qa-1' })).body.expires_in).toBe(60);
    expect((await control('GET', 'stats')).body).toEqual({
      tokenCalls: 0,
      tokensIssued: 3,
      tokenRejections: 0,
      dataCalls: 5,
      unauthorized: 3,
      pushes: 0,
      pushFailures: 0,
      tokenTtlSeconds: 60,
      failNext: { count: 0, status: 401 },
      webhookUrl: null,
      listeners: [],
    });
  });

  test('bad arguments get 400 with what to send; unknown routes 404; browsers 403; off means off', async () => {
    const { sandbox, control } = await sandboxWith();
    expect(await control('POST', 'fail-next', { count: -1 })).toEqual({ status: 400, body: { error: 'count must be a whole number from 0 to 1000' } });
    expect((await control('POST', 'fail-next', { count: 1, status: 418 })).body.error).toMatch(/^status must be one of 401, 408, 429/);
    expect((await control('POST', 'push', { order: 'SO1' })).body).toEqual({ error: 'no order SO1; the sandbox has SO20240601001, SO20240602002' });
    expect((await control('POST', 'push', {})).body.error).toMatch(/^no webhook URL: pass --to URL/);
    expect((await control('POST', 'push', { to: 'ftp://x' })).body).toEqual({ error: 'to must be an http(s) URL' });
    expect((await control('POST', 'token', { user: '' })).body).toEqual({ error: 'user must not be empty' });
    expect((await control('POST', 'ttl', { seconds: 0 })).status).toBe(400);
    const notJson = await fetch(sandbox.url + '/__sandbox/fail-next', { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'count=2' });
    expect([notJson.status, await notJson.json()]).toEqual([400, { error: 'the body must be JSON, e.g. {"count":2}' }]);
    expect((await control('GET', 'nope')).status).toBe(404);
    expect(await control('POST', 'expire', {}, { origin: 'https://evil.example' })).toEqual({
      status: 403,
      body: { error: 'the control API does not answer browsers (a request with an Origin header)' },
    });
    const off = await sandboxWith({ controlApi: 'off' });
    expect((await off.control('POST', 'expire')).status).toBe(401); // an ordinary data path: needs a token
  });

  test('push by order number, tampered, to a URL; the outcome comes back and is counted', async () => {
    const hook = await receiver();
    const { sandbox, control } = await sandboxWith({ webhookSecret: 'whsec_test', webhookUrl: hook.url });
    expect((await control('POST', 'push', { order: 'SO20240602002' })).body).toMatchObject({
      id: 1,
      ok: true,
      status: 200,
      via: 'direct',
      orderNo: 'SO20240602002',
      url: hook.url,
    });
    expect((await control('POST', 'push', { tamper: true })).body).toMatchObject({
      id: 2,
      ok: false,
      status: 401,
      error: 'HTTP 401',
      orderNo: 'SO20240601001',
    });
    expect((await control('POST', 'push', { to: 'http://127.0.0.1:9/nobody' })).body).toMatchObject({
      ok: false,
      via: 'direct',
      url: 'http://127.0.0.1:9/nobody',
    });
    expect(hook.received).toEqual(['SO20240602002']);
    expect(sandbox.stats).toMatchObject({ pushes: 3, pushFailures: 2 });
  });

  test('events stream: every kind, in order, with seq and at; a reconnect with Last-Event-ID gets what it missed; no token or secret anywhere', async () => {
    const hook = await receiver();
    const seen: SandboxEvent[] = [];
    const { sandbox, control } = await sandboxWith({ webhookSecret: 'whsec_test', webhookUrl: hook.url, onEvent: (e) => seen.push(e) });
    const live = await stream(sandbox.url + '/__sandbox/events');
    expect(live.status).toBe(200);
    const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
    const tokens: string[] = [];
    const client = createClient({
      baseUrl: sandbox.url,
      tokenProvider: async ({ forceRefresh }) => (tokens[tokens.length] = (await exchange.getToken('u1', { forceRefresh })).accessToken),
    });
    await client.get(SANDBOX_PATHS.orders);
    await control('POST', 'expire');
    await client.get(SANDBOX_PATHS.logistics, { searchParams: { order_no: 'SO20240601001' } });
    await control('POST', 'push', {});
    await fetch(sandbox.url + '/open/api/v1/sdk/tokens', { method: 'POST', body: '{}' });
    await until(() => live.events.length === seen.length && seen.length >= 9);
    expect(live.events.map((e) => e.data)).toEqual(JSON.parse(JSON.stringify(seen)));
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    expect(seen.every((e, i) => i === 0 || e.at >= seen[i - 1].at)).toBe(true);
    expect(seen.map((e) => e.type + ('status' in e ? ' ' + e.status : ''))).toEqual([
      'token',
      'data 200',
      'control',
      'data 401',
      'token',
      'data 200',
      'push:sent',
      'push',
      'token 401',
    ]);
    const text = JSON.stringify(seen);
    for (const secret of [...tokens, sandbox.credentials.secretKey, 'whsec_test']) expect(text).not.toContain(secret);
    const replay = await stream(sandbox.url + '/__sandbox/events', { 'last-event-id': '6' });
    await until(() => replay.events.length === 3);
    expect(replay.events.map((e) => Number(e.id))).toEqual([7, 8, 9]);
  });

  test("listen: pushes go through the connected listener, which reports the receiver's answer; a listener that goes away fails its push", async () => {
    const { sandbox, control } = await sandboxWith({ webhookSecret: 'whsec_test', webhookTimeoutMs: 2000 });
    expect(await control('POST', 'listen', { forward_to: 'nope' })).toEqual({ status: 400, body: { error: 'forward_to must be an http(s) URL' } });
    const listener = await stream(sandbox.url + '/__sandbox/listen', {}, { forward_to: 'http://127.0.0.1:3000/hook' });
    await until(() => listener.events.length === 1);
    const { listenerId } = listener.events[0].data as { listenerId: string };
    expect(listener.events[0]).toMatchObject({ event: 'ready', data: { forwardTo: 'http://127.0.0.1:3000/hook', signed: true, timeoutMs: 2000 } });
    const pushed = control('POST', 'push', { order: 'SO20240602002' });
    await until(() => listener.events.length === 2);
    const delivery = listener.events[1].data as { id: number; body: string; headers: Record<string, string> };
    expect(JSON.parse(delivery.body)).toMatchObject({ event: 'logistics.updated', logistics: { order_no: 'SO20240602002' } });
    expect(delivery.headers['x-channel-webhook-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(await control('POST', `listen/${listenerId}/result`, { id: delivery.id, status: 204 })).toEqual({ status: 200, body: { ok: true } });
    expect((await pushed).body).toMatchObject({ ok: true, status: 204, via: 'listener', url: 'http://127.0.0.1:3000/hook' });
    expect((await control('POST', `listen/${listenerId}/result`, { id: delivery.id, status: 204 })).status).toBe(409);
    expect((await control('GET', 'stats')).body.listeners).toEqual(['http://127.0.0.1:3000/hook']);
    // --to still goes direct while a listener is connected.
    expect((await control('POST', 'push', { to: 'http://127.0.0.1:9/x' })).body.via).toBe('direct');
    const orphan = control('POST', 'push', {});
    await until(() => listener.events.length === 3);
    listener.close();
    expect((await orphan).body).toMatchObject({ ok: false, error: 'listener disconnected', via: 'listener' });
  });
});

/** One raw request (node:http, so that Host and the browser headers are exactly these). */
function raw(base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(base + path, { method, headers }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      // An event stream stays open: its status is the answer.
      if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) return void (resolve({ status: res.statusCode ?? 0, body: '' }), res.destroy());
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the control API refuses every request a web page can make (#21: an <iframe> took every push)', () => {
  test('no web page can write: Origin, Sec-Fetch-Site, a DNS-rebinding Host, simple POSTs (text/plain, form, no type), GET listen', async () => {
    const { sandbox } = await sandboxWith({ webhookUrl: 'http://127.0.0.1:9/hook' });
    const port = new URL(sandbox.url).port;
    const json = { 'content-type': 'application/json' };
    const listen = JSON.stringify({ forward_to: 'http://evil.example/steal' });
    const attempts: Array<[string, string, string, Record<string, string>, string | undefined, number, RegExp]> = [
      [
        'iframe / img / link GET (no Origin)',
        'GET',
        '/__sandbox/listen?forward_to=http://evil.example/steal',
        { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' },
        undefined,
        403,
        /does not answer web pages \(Sec-Fetch-Site: cross-site\)/,
      ],
      [
        'the same GET from a browser without Sec-Fetch-*',
        'GET',
        '/__sandbox/listen?forward_to=http://evil.example/steal',
        {},
        undefined,
        405,
        /^listen is POST \/__sandbox\/listen with \{"forward_to":"http:\/\/…"\}/,
      ],
      [
        'form POST, text/plain',
        'POST',
        '/__sandbox/listen',
        { 'content-type': 'text/plain' },
        listen,
        415,
        /^send the body as JSON with Content-Type: application\/json/,
      ],
      [
        'form POST, urlencoded',
        'POST',
        '/__sandbox/fail-next',
        { 'content-type': 'application/x-www-form-urlencoded' },
        '{"count":5}',
        415,
        /Content-Type: application\/json/,
      ],
      ['multipart POST', 'POST', '/__sandbox/expire', { 'content-type': 'multipart/form-data; boundary=x' }, '--x--', 415, /Content-Type: application\/json/],
      ['sendBeacon / no-cors POST without a type', 'POST', '/__sandbox/expire', {}, '{}', 415, /Content-Type: application\/json/],
      [
        'a cross-origin fetch',
        'POST',
        '/__sandbox/listen',
        { ...json, origin: 'https://evil.example' },
        listen,
        403,
        /does not answer browsers \(a request with an Origin header\)/,
      ],
      [
        'a same-origin page after DNS rebinding (GET)',
        'GET',
        '/__sandbox/stats',
        { host: `rebind.example:${port}`, 'sec-fetch-site': 'same-origin' },
        undefined,
        403,
        /Sec-Fetch-Site: same-origin/,
      ],
      [
        'a rebinding page in a browser without Sec-Fetch-*',
        'GET',
        '/__sandbox/events',
        { host: `rebind.example:${port}` },
        undefined,
        403,
        /does not answer the host name rebind\.example \(a guard against DNS rebinding\): reach it by IP address or localhost, or start the sandbox with --control-host rebind\.example/,
      ],
      [
        'the same page POSTing JSON (its Origin)',
        'POST',
        '/__sandbox/listen',
        { ...json, host: `rebind.example:${port}`, origin: `http://rebind.example:${port}` },
        listen,
        403,
        /Origin/,
      ],
      [
        'a preflight',
        'OPTIONS',
        '/__sandbox/listen',
        { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
        undefined,
        403,
        /Origin/,
      ],
    ];
    for (const [what, method, path, headers, body, status, error] of attempts) {
      const answer = await raw(sandbox.url, method, path, headers, body);
      expect({ what, status: answer.status }).toEqual({ what, status });
      expect(JSON.parse(answer.body).error).toMatch(error);
    }
    const stats = sandbox.stats;
    expect(stats.tokensIssued + stats.pushes).toBe(0);
    expect((await raw(sandbox.url, 'GET', '/__sandbox/stats', {})).body).toContain('"listeners":[]');
    expect(JSON.parse((await raw(sandbox.url, 'GET', '/__sandbox/stats', {})).body).failNext.count).toBe(0);
  });

  test('what the CLI, curl and a test suite send still works: IP, localhost, *.localhost, a single-label name, controlHosts; a typed address reads', async () => {
    const { sandbox } = await sandboxWith({ controlHosts: ['sandbox.ci.internal'] });
    const port = new URL(sandbox.url).port;
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `app.localhost:${port}`,
      `sandbox:${port}`,
      `sandbox.ci.internal:${port}`,
      `[::1]:${port}`,
      `SANDBOX.CI.INTERNAL:${port}`,
    ]) {
      expect({
        host,
        status: (await raw(sandbox.url, 'POST', '/__sandbox/expire', { host, 'content-type': 'application/json; charset=utf-8' }, '')).status,
      }).toEqual({ host, status: 200 });
    }
    // The address typed in a browser's address bar: a read, Sec-Fetch-Site: none.
    expect((await raw(sandbox.url, 'GET', '/__sandbox/stats', { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' })).status).toBe(200);
    expect(await raw(sandbox.url, 'GET', '/__sandbox/expire', {})).toEqual({
      status: 405,
      body: '{"error":"expire changes the sandbox: use POST with Content-Type: application/json"}',
    });
    expect((await raw(sandbox.url, 'POST', '/__sandbox/stats', { 'content-type': 'application/json' }, '{}')).status).toBe(404);
    await expect(startBare({ controlHosts: ['http://x'] })).rejects.toThrow(
      "controlHosts must be an array of host names without port or scheme, e.g. ['sandbox.ci.internal']",
    );
    await expect(startBare({ controlHost: ['x'] } as never)).rejects.toThrow('unknown startSandbox option "controlHost"; did you mean "controlHosts"?');
    await expect(startBare({ webhookSecrt: 'x' } as never)).rejects.toThrow('unknown startSandbox option "webhookSecrt"; did you mean "webhookSecret"?');
  });

  test('verify: a token this sandbox issued, one it expired, one from another sandbox', async () => {
    const { sandbox, control } = await sandboxWith();
    const other = await sandboxWith();
    const token = await sandbox.issueToken('qa-1');
    expect(sandbox.verifyToken(token)).toEqual({ valid: true, claims: { sub: 'qa-1', iat: expect.any(Number), exp: expect.any(Number), jti: '1' } });
    expect(await control('POST', 'verify', { token })).toEqual({ status: 200, body: sandbox.verifyToken(token) });
    expect((await control('POST', 'verify', { token: await other.sandbox.issueToken('qa-1') })).body).toEqual({
      valid: false,
      reason: 'signature invalid (tampered or foreign token)',
    });
    sandbox.expireTokens();
    expect(sandbox.verifyToken(token)).toMatchObject({ valid: false, reason: 'token expired (expireTokens)', claims: { jti: '1' } });
    expect(await control('POST', 'verify', {})).toEqual({ status: 400, body: { error: 'token: the JWT to check is required' } });
  });

  test("a failed push keeps the start of the receiver's answer (whitespace collapsed, 300 characters, tokens masked)", async () => {
    const hook = await receiver({ status: 500 });
    const { control } = await sandboxWith();
    expect((await control('POST', 'push', { to: hook.url })).body).not.toHaveProperty('answer'); // an empty answer
    const { createServer } = await import('node:http');
    const server = createServer(
      (req, res) => (
        req.resume(),
        res.writeHead(503).end(`{\n  "error": "down",\n  "token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln",\n  "pad": "${'y'.repeat(400)}"\n}`)
      ),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => server.close(r)));
    const pushed = (await control('POST', 'push', { to: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` })).body;
    expect(pushed).toMatchObject({ ok: false, status: 503, answer: expect.stringMatching(/^\{ "error": "down", "token": "\[token\]", "pad": "y+…$/) });
    expect((pushed.answer as string).length).toBe(300);
  });
});
