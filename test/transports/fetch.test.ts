import { afterEach, expect, test } from 'vitest';
import { ConfigError, createClient, TimeoutError } from '../../src/index.js';
import { startFakeService, type FakeService } from '../helpers/fake-service.js';
import { startServer, type TestServer } from '../helpers/server.js';

const closers: Array<FakeService | TestServer> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((s) => s.close()));
});

test('uses the fetch option for every attempt', async () => {
  const service = await startFakeService();
  closers.push(service);
  let calls = 0;
  const client = createClient({
    baseUrl: service.url,
    tokenProvider: () => service.issue(),
    fetch: (input, init) => {
      calls++;
      return fetch(input, init);
    },
  });
  await client.get('/a');
  service.expireAll();
  await client.get('/b');
  expect(calls).toBe(3);
});

test('ky hooks pass through and see the Bearer header; the replay after 401 runs them again', async () => {
  const service = await startFakeService();
  closers.push(service);
  const seen: string[] = [];
  const client = createClient({
    baseUrl: service.url,
    tokenProvider: () => service.issue(),
    ky: {
      hooks: {
        beforeRequest: [
          ({ request }) => {
            seen.push(request.headers.get('authorization') ?? 'none');
            request.headers.set('x-hooked', '1');
          },
        ],
      },
    },
  });
  await client.get('/a');
  service.expireAll();
  await client.get('/b');
  const [t1, t2] = service.issued;
  expect(seen).toEqual([`Bearer ${t1}`, `Bearer ${t1}`, `Bearer ${t2}`]);
  expect(service.hits.every((h) => h.headers['x-hooked'] === '1')).toBe(true);
});

test('refuses ky options the SDK owns, naming the option to use', () => {
  expect(() => createClient({ baseUrl: 'https://a.example', tokenProvider: () => '', ky: { retry: 3 } as never })).toThrow(ConfigError);
  expect(() => createClient({ baseUrl: 'https://a.example', tokenProvider: () => '', ky: { timeout: 3 } as never })).toThrow(
    /ky\.timeout is set by channel-sdk; use the client or request option of that name instead/,
  );
});

test('a body that stalls after the headers times out within the attempt budget, and the connection is dropped', async () => {
  const service = await startFakeService();
  closers.push(service);
  let dropped: () => void = () => {};
  const connectionClosed = new Promise<void>((resolve) => (dropped = resolve));
  const stalling = await startServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"code":0,');
  });
  // The client gave up: it must close the connection, not leave it reading. Watched on the
  // socket, so that it holds in either order on a loaded machine (the 100 ms may end before
  // the handler runs, in this same process).
  stalling.server.on('connection', (socket) => socket.on('close', () => dropped()));
  closers.push(stalling);
  const client = createClient({ baseUrl: stalling.url, tokenProvider: () => service.issue(), timeout: 100, retry: 0 });
  await expect(client.get('/x')).rejects.toBeInstanceOf(TimeoutError);
  await connectionClosed;
});

test('a runtime with no fetch (a uni-app or Taro page that imported channel-sdk, not channel-sdk/miniprogram) gets a ConfigError naming the entry, at once and once', async () => {
  const service = await startFakeService();
  closers.push(service);
  const realFetch = globalThis.fetch;
  const client = createClient({ baseUrl: service.url, tokenProvider: () => service.issue() });
  // @ts-expect-error -- a mini-program's global scope has no fetch
  delete globalThis.fetch;
  try {
    for (const call of [() => client.get('/a'), () => client.fetch('/a')]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(
        /this runtime has no fetch \(a mini-program\?\): import createClient from 'channel-sdk\/miniprogram', or pass the fetch option/,
      );
    }
  } finally {
    globalThis.fetch = realFetch;
  }
  // The token was asked for, no attempt went out, none was retried; with fetch back the client works.
  expect(service.hits).toHaveLength(0);
  await expect(client.get('/a')).resolves.toBeTruthy();
});
