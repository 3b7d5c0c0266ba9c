// @vitest-environment node
// The retry budget (issue #45 item 4): retries of transient failures draw on one budget per
// client, over the browser entry on Node's fetch and over an emulated wx.request, against the fake
// service on real HTTP. Targets from the issue: 100 GETs in an outage cost at most 120 attempts;
// after 50 successes a GET that fails once is retried; the replay after a 401 never draws on it;
// Retry-After still wins.
import { describe, expect, test } from 'vitest';
import type { Client } from '../../src/core/client.js';
import type { ClientEvents } from '../../src/core/events.js';
import type { CoreClientOptions } from '../../src/core/types.js';
import { createClient as createBrowserClient } from '../../src/index.js';
import { createClient as createMiniClient } from '../../src/miniprogram.js';
import { createHost } from '../helpers/hosts.js';
import { fakeServices, providerFor } from '../conformance/suite.js';

const entries: Array<[string, (options: CoreClientOptions) => Client]> = [
  ['browser entry (fetch)', (options) => createBrowserClient(options)],
  ['mini-program entry (wx.request)', (options) => createMiniClient({ ...options, request: createHost('wx').request })],
];

for (const [name, createClient] of entries) {
  describe(`retry budget: ${name}`, () => {
    const start = fakeServices();
    const quick = { retry: { delay: () => 0 } };

    async function world(extra: Partial<CoreClientOptions> = {}) {
      const service = await start();
      const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), ...quick, ...extra });
      const refused: Array<ClientEvents['retry:refused']> = [];
      client.on('retry:refused', (e) => void refused.push(e));
      await client.get('/warm');
      const attempts = (path: string) => service.hits.filter((h) => h.path.startsWith(path)).length;
      return { service, client, refused, attempts };
    }

    /** `n` GETs into an outage (every one answering 503, no Retry-After), one after another. */
    async function outage(client: Client, n: number, path = '/flaky/100000') {
      for (let i = 0; i < n; i++) await client.get(path).catch(() => {});
    }

    test('an outage: 100 GETs one after another cost at most 120 attempts (not 300)', async () => {
      const { client, refused, attempts } = await world();
      await outage(client, 100);
      expect(attempts('/flaky/')).toBeLessThanOrEqual(120);
      expect(attempts('/flaky/')).toBeGreaterThanOrEqual(100);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0]).toMatchObject({ method: 'GET', reason: 'status', status: 503, attempt: expect.any(Number) });
    });

    test('an outage: 100 GETs at once cost at most 120 attempts', async () => {
      const { client, attempts } = await world();
      await Promise.all(Array.from({ length: 100 }, () => client.get('/flaky/100000').catch(() => {})));
      expect(attempts('/flaky/')).toBeLessThanOrEqual(120);
    });

    test('network failures draw on it too: 50 GETs on a dropped connection cost at most 60 attempts', async () => {
      const { client, attempts } = await world();
      for (let i = 0; i < 50; i++) await client.get('/drop/100000').catch(() => {});
      expect(attempts('/drop/')).toBeLessThanOrEqual(60);
    });

    test('after 50 successes a GET that fails once is retried (spent before them, it was refused)', async () => {
      const { client, refused } = await world();
      await outage(client, 30);
      await expect(client.get('/flaky/1?before')).rejects.toMatchObject({ code: 'HTTP_ERROR', status: 503 });
      const refusedBefore = refused.length;
      for (let i = 0; i < 50; i++) await client.get('/ok/' + i);
      await expect(client.get('/flaky/1?after')).resolves.toMatchObject({ path: '/flaky/1?after' });
      expect(refused).toHaveLength(refusedBefore);
    });

    test('the replay after a 401 never draws on it: with the budget spent, an expired token still costs one refresh and one replay', async () => {
      const { client, service, attempts } = await world();
      await outage(client, 30);
      service.expireAll();
      await expect(client.get('/after-expiry')).resolves.toMatchObject({ path: '/after-expiry' });
      expect(attempts('/after-expiry')).toBe(2);
    });

    test('Retry-After still wins: with the budget spent, a 503 with Retry-After is retried after it (up to retry.limit)', async () => {
      const { client, attempts } = await world();
      await outage(client, 30);
      await expect(client.get('/retry-after/0')).rejects.toMatchObject({ status: 503 });
      expect(attempts('/retry-after/')).toBe(3);
    });

    test('retryBudget: false: every call spends its own retry limit, as before (20 GETs, 60 attempts)', async () => {
      const { client, attempts } = await world({ retryBudget: false });
      await outage(client, 20);
      expect(attempts('/flaky/')).toBe(60);
    });

    test('retryBudget: { max: 0, ratio: 0 }: no retry at all but those a Retry-After asks for', async () => {
      const { client, attempts } = await world({ retryBudget: { max: 0, ratio: 0 } });
      await outage(client, 5);
      expect(attempts('/flaky/')).toBe(5);
    });
  });
}
