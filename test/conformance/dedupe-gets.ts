/**
 * dedupeGets (issue #22 item 4): identical GETs in flight share one network call, alova's
 * default; each caller keeps its own signal, schema and raw, and the shared call follows the
 * one-refresh rule. Run over every transport like the conformance suite.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import type { Client } from '../../src/core/client.js';
import { createCancelToken } from '../../src/core/cancel.js';
import type { CoreClientOptions } from '../../src/core/types.js';
import { AbortError, ResponseError } from '../../src/errors/index.js';
import { sendJson, startServer } from '../helpers/server.js';
import { closedAfterEach, fakeServices, providerFor } from './suite.js';

export function dedupeGetsSuite(name: string, createClient: (options: CoreClientOptions) => Client): void {
  describe(`dedupeGets (#22): ${name}`, () => {
    const closing = closedAfterEach();
    const start = fakeServices();

    test('50 identical GETs in flight make 1 network call; each caller gets its own schema and raw', async () => {
      const service = await start();
      const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), dedupeGets: true });
      const calls = Array.from({ length: 50 }, (_, i) =>
        i === 0
          ? client.get('/slow/50', { searchParams: { q: 1 }, schema: z.object({ method: z.number() }) })
          : i === 1
            ? client.get('/slow/50', { searchParams: { q: 1 }, raw: true })
            : client.get('/slow/50', { searchParams: { q: 1 }, schema: z.object({ method: z.literal('GET') }) }),
      );
      const results = await Promise.allSettled(calls);
      expect(service.hits).toHaveLength(1);
      expect(results[0]).toMatchObject({ status: 'rejected', reason: expect.any(ResponseError) });
      expect(results[1]).toMatchObject({ status: 'fulfilled', value: { code: 0, data: { path: '/slow/50?q=1' } } });
      for (const r of results.slice(2)) expect(r).toMatchObject({ status: 'fulfilled', value: { method: 'GET' } });
      // Once settled, the next GET is a call of its own.
      await client.get('/slow/50', { searchParams: { q: 1 } });
      expect(service.hits).toHaveLength(2);
    });

    test('other query, headers or timeout, and every POST, go alone; without dedupeGets nothing is shared', async () => {
      const service = await start();
      const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), dedupeGets: true });
      await Promise.all([
        client.get('/slow/30'),
        client.get('/slow/30'),
        client.get('/slow/30', { searchParams: { a: 1 } }),
        client.get('/slow/30', { headers: { 'x-tenant': 'b' } }),
        client.get('/slow/30', { timeout: 5000 }),
        client.post('/slow/30', { json: {} }),
        client.post('/slow/30', { json: {} }),
      ]);
      expect(service.hits).toHaveLength(6);
      const plain = createClient({ baseUrl: service.url, tokenProvider: providerFor(service) });
      await Promise.all(Array.from({ length: 5 }, () => plain.get('/slow/30')));
      expect(service.hits).toHaveLength(11);
    });

    test("one caller's abort never cancels the others; when every caller left, the call is dropped", async () => {
      const waiting: Array<() => void> = [];
      let closed = 0;
      const server = await startServer((_req, res) => {
        res.on('close', () => {
          if (!res.writableEnded) closed++;
        });
        waiting.push(() => sendJson(res, 200, { code: 0, data: 'shared' }));
      });
      closing(server);
      const service = await start();
      const client = createClient({ baseUrl: server.url, tokenProvider: () => service.issue(), dedupeGets: true });
      const a = createCancelToken();
      const b = new AbortController();
      const first = client.get('/x', { signal: a.signal });
      const second = client.get('/x', { signal: b.signal });
      const third = client.get('/x');
      for (let i = 0; i < 100 && !waiting.length; i++) await new Promise((r) => setTimeout(r, 10));
      a.cancel('left');
      await expect(first).rejects.toBeInstanceOf(AbortError);
      waiting[0]();
      await expect(second).resolves.toBe('shared');
      await expect(third).resolves.toBe('shared');
      expect(waiting).toHaveLength(1);

      const c = createCancelToken();
      const d = createCancelToken();
      const lonely = [client.get('/y', { signal: c.signal }), client.get('/y', { signal: d.signal })];
      for (let i = 0; i < 100 && waiting.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      c.cancel();
      d.cancel();
      for (const p of lonely) await expect(p).rejects.toBeInstanceOf(AbortError);
      await expect.poll(() => closed).toBe(1);
    });

    test('a 401 on the shared call: one forced refresh, one replay, every caller served; clearToken() fences them all', async () => {
      const service = await start();
      const provider = providerFor(service);
      const client = createClient({ baseUrl: service.url, tokenProvider: provider, dedupeGets: true });
      await client.get('/warm');
      service.expireAll();
      const results = await Promise.all(Array.from({ length: 20 }, () => client.get<{ path: string }>('/slow/30')));
      expect(results.every((r) => r.path === '/slow/30')).toBe(true);
      expect(service.hits.filter((h) => h.path === '/slow/30').map((h) => h.status)).toEqual([401, 200]);
      expect(provider.forced()).toBe(1);
      const fenced = Array.from({ length: 5 }, () => client.get('/slow/200').catch((e: unknown) => e));
      await new Promise((r) => setTimeout(r, 50));
      client.clearToken();
      for (const p of fenced) expect(await p).toBeInstanceOf(AbortError);
    });
  });
}
