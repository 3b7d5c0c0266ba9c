/**
 * Issue #20 item 6 over the real transports: a partner backend whose token cache hands out
 * tokens of every age (issued up to 15 minutes before), the device clock wrong by hours, and
 * steady traffic (a request every 20 s, three within refreshLeeway) across the cached token's end and the next tokens'.
 * API.md rule 5: such traffic sees no 401 at all. The client reads the service's clock from
 * the `Date` header of its answers (the fake service sends its own clock there, and exposes it
 * to pages of other origins), so nothing depends on the device clock or on when the token arrived.
 */
import { afterEach, describe, expect, test } from 'vitest';
import type { Client } from '../../src/core/client.js';
import type { CoreClientOptions } from '../../src/core/types.js';
import { createClient as createFetchClient } from '../../src/index.js';
import { createClient as createMiniClient } from '../../src/miniprogram.js';
import { createClock, startFakeService, type FakeService } from '../helpers/fake-service.js';
import { createHost } from '../helpers/hosts.js';

const transports: Array<[string, (options: CoreClientOptions) => Client]> = [
  ['fetch (ky)', (options) => createFetchClient(options)],
  ['wx.request', (options) => createMiniClient({ ...options, request: createHost('wx').request })],
  ['my.request (Alipay)', (options) => createMiniClient({ ...options, request: createHost('my').request })],
];

const hour = 3_600_000;
let service: FakeService | undefined;
afterEach(() => service?.close());

/**
 * A partner backend with a token cache: a plain call gets the cached token, issued `age`
 * seconds before the first call (as if another page of the same user asked earlier) and kept
 * until its end; forceRefresh bypasses the cache, as the tokenProvider contract asks.
 */
function cachingBackend(svc: FakeService, age: number) {
  let cached: { token: string; exp: number } | undefined;
  let first = true;
  const calls: boolean[] = [];
  const provider = ({ forceRefresh }: { forceRefresh: boolean }) => {
    calls.push(forceRefresh);
    const now = svc.clock.now() / 1000;
    if (forceRefresh || !cached || cached.exp <= now) {
      const token = svc.issue('user-1', first && !forceRefresh ? age : 0);
      first = false;
      cached = { token, exp: JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).exp };
      return cached.token;
    }
    return cached.token;
  };
  return Object.assign(provider, { calls });
}

describe.each(transports)('refresh ahead of a cached token, over %s (#20 item 6)', (_name, createClient) => {
  test.each([
    [0, 3 * hour],
    [300, 0],
    [600, -3 * hour],
    [840, 12 * hour],
    [890, -12 * hour],
  ])('a token issued %i s before it was handed out, device clock off by %i ms: 20 minutes of traffic, no 401', async (age, skew) => {
    const clock = createClock();
    service = await startFakeService({ clock, ttl: 900 });
    const backend = cachingBackend(service, age);
    const client = createClient({ baseUrl: service.url, tokenProvider: backend, now: () => clock.now() + skew, refreshLeeway: 60 });
    for (let i = 0; i < 60; i++) {
      await client.get('/tick/' + i);
      clock.advance(20_000);
      // Let a refresh ahead, which runs beside the requests, land before the next one.
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    expect(service.hits.filter((h) => h.status === 401).map((h) => h.path)).toEqual([]);
    // One refresh per token lifetime and the cached one's: no storm.
    expect(backend.calls.length).toBeLessThanOrEqual(4);
  });

  test('a token already expired in the cache, before any Date is known: one 401 and one refresh, as before; then none', async () => {
    const clock = createClock();
    service = await startFakeService({ clock, ttl: 900 });
    const backend = cachingBackend(service, 950);
    const client = createClient({ baseUrl: service.url, tokenProvider: backend, now: () => clock.now() - 5 * hour });
    for (let i = 0; i < 60; i++) {
      await client.get('/tick/' + i);
      clock.advance(10_000);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    expect(service.hits.filter((h) => h.status === 401).map((h) => h.path)).toEqual(['/tick/0']);
  });
});

describe.each(transports)('tokens with exp but no iat, over %s (#29 item 6)', (_name, createClient) => {
  test.each([
    ['20 minutes', 20 * 60_000],
    ['a year', 365 * 24 * hour],
  ])("the service's Date %s ahead of the tokens' issuer: 20 requests make at most 2 provider calls, none 401", async (_ahead, dateAhead) => {
    service = await startFakeService({ dateAhead, withoutIat: true });
    const svc = service;
    const calls: boolean[] = [];
    const client = createClient({ baseUrl: svc.url, tokenProvider: ({ forceRefresh }) => (calls.push(forceRefresh), svc.issue()) });
    for (let i = 0; i < 20; i++) await client.get('/orders');
    expect(calls.length).toBeLessThanOrEqual(2);
    expect(svc.hits.map((h) => h.status).filter((s) => s !== 200)).toEqual([]);
  });
});
