/** The demo server without a browser: what it answers to odd paths, and how it starts on a busy port. */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

interface Demo {
  url: string;
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

  test.each(['/vendor/__proto__/x', '/vendor/constructor/x', '/vendor/toString/', '/constructor/', '/toString/', '/__proto__', '/vendor/channel-sdk/../../package.json', '/vendor/channel-sdk/', '/missing.js'])(
    'GET %s -> 404 with no internals',
    async (path) => {
      const response = await fetch(demo.url + path);
      expect([response.status, await response.text()]).toEqual([404, '']);
    },
  );

  test('the page, its modules and the package it imports by name are served', async () => {
    for (const path of ['/', '/app.js', '/style.css', '/vendor/channel-sdk/index.js']) expect({ path, status: (await fetch(demo.url + path)).status }).toEqual({ path, status: 200 });
  });

  test('control routes refuse what they do not know, without internals', async () => {
    const push = await fetch(demo.url + '/api/control/push?mode=__proto__', { method: 'POST' });
    expect([push.status, await push.json()]).toEqual([400, { error: 'mode must be signed, tampered, fail or slow' }]);
    expect((await fetch(demo.url + '/api/control/ttl?seconds=5', { method: 'POST' })).status).toBe(400);
    expect((await fetch(demo.url + '/api/constructor', { method: 'POST' })).status).toBe(404);
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
    expect({ code, stdout, stderr }).toEqual({ code: 1, stdout: '', stderr: `channel-sdk demo: port ${port} is in use; pick another with PORT=…, or PORT=0 for any free port\n` });
  });

  test('without PORT it moves on to the next free port', async () => {
    const demo = await startDemoOnFreePort(port, 10, {});
    const got = Number(new URL(demo.url).port);
    await demo.close();
    expect(got > port && got < port + 10).toBe(true);
    await expect(startDemoOnFreePort(port, 1, {})).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});
