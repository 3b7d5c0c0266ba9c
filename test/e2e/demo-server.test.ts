/** The demo server without a browser: what it answers to odd paths, and how it starts on a busy port. */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

interface Demo {
  url: string;
  sandbox: { url: string };
  close(): Promise<void>;
}
const { startDemo, startDemoOnFreePort } = (await import(/* @vite-ignore */ new URL('../../demo/server.mjs', import.meta.url).href)) as {
  startDemo(o: object): Promise<Demo>;
  startDemoOnFreePort(first: number, tries: number, o?: object): Promise<Demo>;
};

describe('demo server', () => {
  let demo: Demo;
  beforeAll(async () => {
    demo = await startDemo({ port: 0 });
  });
  afterAll(() => demo.close());

  test.each([
    '/vendor/__proto__/x',
    '/vendor/constructor/x',
    '/vendor/toString/',
    '/constructor/',
    '/toString/',
    '/__proto__',
    '/vendor/channel-sdk/../../package.json',
    '/vendor/channel-sdk/',
    '/missing.js',
  ])('GET %s -> 404 with no internals', async (path) => {
    const response = await fetch(demo.url + path);
    expect([response.status, await response.text()]).toEqual([404, '']);
  });

  test("QA's `channel-sandbox ttl 60`, then sign in again: the backend hands out a 60-s token, not the 900-s one its cache held", async () => {
    const lifetime = async () => {
      const { access_token } = (await (await fetch(demo.url + '/api/channel-token?user=qa-ttl')).json()) as { access_token: string };
      const { iat, exp } = JSON.parse(Buffer.from(access_token.split('.')[1], 'base64url').toString()) as { iat: number; exp: number };
      return exp - iat;
    };
    expect(await lifetime()).toBe(900);
    // What `channel-sandbox ttl 60 --sandbox <the demo's sandbox>` sends.
    const ttl = await fetch(demo.sandbox.url + '/__sandbox/ttl', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"seconds":60}' });
    expect(ttl.status).toBe(200);
    try {
      expect(await lifetime()).toBe(60);
      expect(await lifetime()).toBe(60); // and that one is cached in turn
    } finally {
      await fetch(demo.sandbox.url + '/__sandbox/ttl', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"seconds":900}' });
    }
  });

  test('the page, its modules and the package it imports by name are served', async () => {
    for (const path of ['/', '/app.js', '/style.css', '/vendor/channel-sdk/index.js'])
      expect({ path, status: (await fetch(demo.url + path)).status }).toEqual({ path, status: 200 });
  });

  test('a browser asking for /favicon.ico gets "no icon" (204), not a 404 (the page has its icon inline)', async () => {
    const icon = await fetch(demo.url + '/favicon.ico');
    expect([icon.status, await icon.text()]).toEqual([204, '']);
  });

  test('control routes refuse what they do not know, without internals', async () => {
    const push = await fetch(demo.url + '/api/control/push?mode=__proto__', { method: 'POST' });
    expect([push.status, await push.json()]).toEqual([400, { error: 'mode must be signed, tampered, fail or slow' }]);
    const ttl = await fetch(demo.url + '/api/control/ttl?seconds=5', { method: 'POST' });
    expect([ttl.status, await ttl.json()]).toEqual([400, { error: 'seconds must be 900 or 20' }]);
    expect((await fetch(demo.url + '/api/constructor', { method: 'POST' })).status).toBe(404);
  });

  test("the refresh-ahead flow's short lifetime is the page's to switch to and back", async () => {
    expect(await (await fetch(demo.url + '/api/config')).json()).toMatchObject({ ttl: 900, aheadTtl: 20 });
    for (const seconds of [20, 900]) {
      const answer = await fetch(demo.url + `/api/control/ttl?seconds=${seconds}`, { method: 'POST' });
      expect([answer.status, await answer.json()]).toEqual([200, { ttl: seconds }]);
    }
  });

  test("the token route's row is stamped when it started: above the token the service issued for it", async () => {
    const rows: Array<{ lane: string; kind: string; at: number; text: string }> = [];
    const events = await fetch(demo.url + '/api/events');
    const reader = (events.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    const reading = (async () => {
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const line = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (line.startsWith('data: ')) rows.push(JSON.parse(line.slice(6)));
        }
      }
    })();
    const token = await fetch(demo.url + '/api/channel-token?user=order-check&force=1');
    expect(token.status).toBe(200);
    await expect.poll(() => rows.filter((r) => r.kind === 'exchange-forced' || r.kind === 'token-issued').length).toBe(2);
    await reader.cancel();
    await reading;
    const exchange = rows.find((r) => r.kind === 'exchange-forced');
    const issued = rows.find((r) => r.kind === 'token-issued');
    // Emitted after the token came back, yet stamped before the service issued it; it says how long it took.
    expect(rows.indexOf(exchange as (typeof rows)[number])).toBeGreaterThan(rows.indexOf(issued as (typeof rows)[number]));
    expect((exchange?.at ?? Infinity) < (issued?.at ?? -Infinity)).toBe(true);
    expect(exchange?.text).toMatch(/^token route: exchange for order-check with forceRefresh \(cache bypassed\) → token #\d+ \(took [\d.]+ ms\)$/);
  });

  test('a refresh-ahead lifetime outside 4 s … ttl is refused with the reason', async () => {
    await expect(startDemo({ port: 0, aheadTtl: 2 })).rejects.toThrow('aheadTtl must be a number of seconds from 4 to ttl (900); got 2');
    await expect(startDemo({ port: 0, ttl: 60, aheadTtl: 90 })).rejects.toThrow('aheadTtl must be a number of seconds from 4 to ttl (60); got 90');
  });
});

describe('starting on a busy port', { timeout: 60_000 }, () => {
  let busy: Server;
  let port: number;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    port = (busy.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((r) => busy.close(r)));

  test('npm run demo with PORT set to a busy port: one line, exit 1', async () => {
    const child = spawn(process.execPath, ['demo/server.mjs'], { env: { ...process.env, PORT: String(port) } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((r) => child.on('close', r));
    expect({ code, stdout, stderr }).toEqual({
      code: 1,
      stdout: '',
      stderr: `channel-sdk demo: port ${port} is in use; pick another with PORT=…, or PORT=0 for any free port\n`,
    });
  });

  test('without PORT it moves on to the next free port', async () => {
    const demo = await startDemoOnFreePort(port, 10, {});
    const got = Number(new URL(demo.url).port);
    await demo.close();
    expect(got > port && got < port + 10).toBe(true);
    await expect(startDemoOnFreePort(port, 1, {})).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});
