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

    test('50 GETs in flight make 1 network call per reading (49 with a schema, 1 raw: 2 calls); each caller gets its own schema', async () => {
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
      // raw is part of the key (#29 item 4): the raw caller's reading is not the others'.
      expect(service.hits).toHaveLength(2);
      expect(results[0]).toMatchObject({ status: 'rejected', reason: expect.any(ResponseError) });
      expect(results[1]).toMatchObject({ status: 'fulfilled', value: { code: 0, data: { path: '/slow/50?q=1' } } });
      for (const r of results.slice(2)) expect(r).toMatchObject({ status: 'fulfilled', value: { method: 'GET' } });
      // Once settled, the next GET is a call of its own.
      await client.get('/slow/50', { searchParams: { q: 1 } });
      expect(service.hits).toHaveLength(3);
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

    /**
     * An account the service keeps: a GET /balance reads the balance as it arrives and is answered once
     * the test calls `release()` (at once after that); any other method is a write that applies as it arrives and
     * is answered once `answerWrites()` ran (at once after that). `arrived(n)` resolves once n
     * GETs have been read, `applied(n)` once n writes have been.
     */
    async function account() {
      let balance = 100;
      const heldReads: Array<() => void> = [];
      const heldWrites: Array<() => void> = [];
      let readsOpen = false;
      let writesOpen = false;
      const counts = { gets: 0, writes: 0 };
      const waits: Array<{ kind: 'gets' | 'writes'; n: number; resolve: () => void }> = [];
      const notify = () => {
        for (const w of waits.splice(0)) (counts[w.kind] >= w.n ? w.resolve : () => waits.push(w))();
      };
      const server = closing(
        await startServer((req, res) => {
          if (req.method === 'GET' && req.url !== '/balance') return sendJson(res, 200, { code: 0, data: {} });
          if (req.method !== 'GET') {
            balance -= req.body ? (JSON.parse(req.body) as { amount: number }).amount : 0;
            const after = balance;
            counts.writes++;
            const answer = () => sendJson(res, 200, { code: 0, data: { balance: after } });
            if (writesOpen) answer();
            else heldWrites.push(answer);
          } else {
            const read = balance;
            counts.gets++;
            const answer = () => sendJson(res, 200, { code: 0, data: { balance: read } });
            if (readsOpen) answer();
            else heldReads.push(answer);
          }
          notify();
        }),
      );
      const until = (kind: 'gets' | 'writes', n: number) => new Promise<void>((resolve) => (counts[kind] >= n ? resolve() : waits.push({ kind, n, resolve })));
      return {
        url: server.url,
        gets: () => counts.gets,
        arrived: (n: number) => until('gets', n),
        applied: (n: number) => until('writes', n),
        release: () => ((readsOpen = true), heldReads.splice(0).forEach((answer) => answer())),
        answerWrites: () => ((writesOpen = true), heldWrites.splice(0).forEach((answer) => answer())),
      };
    }

    test('read-your-writes (#29 item 5): a GET started after a completed POST never joins a GET started before it', async () => {
      const service = await start();
      const bank = await account();
      bank.answerWrites();
      const client = createClient({ baseUrl: bank.url, tokenProvider: providerFor(service), dedupeGets: true });
      const before = client.get<{ balance: number }>('/balance');
      await bank.arrived(1);
      expect(await client.post<{ balance: number }>('/withdraw', { json: { amount: 30 } })).toEqual({ balance: 70 });
      const after = client.get<{ balance: number }>('/balance');
      bank.release();
      expect(await before).toEqual({ balance: 100 });
      expect(await after).toEqual({ balance: 70 });
      expect(bank.gets()).toBe(2);
    });

    test('read-your-writes (#29 item 5): a GET started while a write is under way is not joined by a GET started after the write ended', async () => {
      const service = await start();
      const bank = await account();
      const client = createClient({ baseUrl: bank.url, tokenProvider: providerFor(service), dedupeGets: true });
      const write = client.post('/withdraw', { json: { amount: 30 } });
      await bank.applied(1);
      // Under way: applied by the service, not answered yet. A GET now may read either state.
      const during = client.get<{ balance: number }>('/balance');
      await bank.arrived(1);
      bank.answerWrites();
      await write;
      const after = client.get<{ balance: number }>('/balance');
      bank.release();
      await during;
      expect(await after).toEqual({ balance: 70 });
      expect(bank.gets()).toBe(2);
    });

    test('a write of any kind (PUT, PATCH, DELETE) ends the sharing of the GETs under way; another GET does not', async () => {
      const service = await start();
      const bank = await account();
      bank.answerWrites();
      const client = createClient({ baseUrl: bank.url, tokenProvider: providerFor(service), dedupeGets: true, retry: 0 });
      const reads = [client.get('/balance')];
      await bank.arrived(1);
      await client.get('/other-read').catch(() => {});
      reads.push(client.get('/balance'));
      for (const method of ['PUT', 'PATCH', 'DELETE']) {
        await client.request('/state', { method }).catch(() => {});
        reads.push(client.get('/balance'));
      }
      bank.release();
      await Promise.all(reads);
      // The first two shared one call (another read between them), each write started a new one.
      expect(bank.gets()).toBe(4);
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
