// client.hostRequest (issue #32) under the real mini-program request libraries, as the recipes of
// docs/guide/request-stacks.md wire them (examples/stacks/alova-adapter.ts,
// examples/stacks/luch-request.ts), over the emulated hosts and real HTTP. A storm through each, on
// a token the service has ended, costs one forced refresh and every call succeeds.
import { createAlova } from 'alova';
import Request from 'luch-request';
import { afterEach, describe, expect, test } from 'vitest';
import { hostRequestAdapter } from '../../../examples/stacks/alova-adapter.js';
import { routeThroughClient } from '../../../examples/stacks/luch-request.js';
import { createClient, type HostRequestCall, type HostRequestResult } from '../../../src/miniprogram.js';
import { providerFor } from '../../conformance/suite.js';
import { startFakeService, type FakeService } from '../../helpers/fake-service.js';
import { createHost, type HostKind } from '../../helpers/hosts.js';

let service: FakeService;
afterEach(async () => {
  await service?.close();
  delete (globalThis as Record<string, unknown>).uni;
});

interface Echo {
  code: number;
  data: { method: string; path: string; body: string };
}

const N = 40;

async function expired(kind: HostKind) {
  service = await startFakeService();
  const host = createHost(kind);
  const provider = providerFor(service, 5);
  const client = createClient({ baseUrl: service.url, tokenProvider: provider, request: host.request });
  await client.hostRequest({ url: '/warm' });
  service.expireAll();
  service.hits.length = 0;
  return { host, client, provider };
}

/** One forced refresh; every call met at most one 401 (queued ones leave with the new token). */
function oneRefresh(provider: ReturnType<typeof providerFor>) {
  expect(provider.forced()).toBe(1);
  const byPath = new Map<string, string>();
  for (const hit of service.hits) byPath.set(hit.path, (byPath.has(hit.path) ? byPath.get(hit.path) + ',' : '') + hit.status);
  expect(byPath.size).toBe(N);
  expect([...byPath.values()].filter((statuses) => statuses !== '200' && statuses !== '401,200')).toEqual([]);
}

describe('client.hostRequest under the real mini-program stacks: a storm costs one forced refresh', () => {
  test('alova (requestAdapter: hostRequestAdapter(client)): GETs and JSON POSTs', async () => {
    const { client, provider } = await expired('wx');
    const alova = createAlova({
      baseURL: service.url,
      requestAdapter: hostRequestAdapter(client),
      responded: (result: HostRequestResult) => result.data as Echo,
      cacheFor: null,
    });
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) => (i % 2 ? alova.Post<Echo>('/a/' + i, { i }).send() : alova.Get<Echo>('/a/' + i).send())),
    );
    expect(results.map((r) => [r.data.method, r.data.path, r.data.body ? JSON.parse(r.data.body) : ''])).toEqual(
      results.map((_, i) => [i % 2 ? 'POST' : 'GET', '/a/' + i, i % 2 ? { i } : '']),
    );
    oneRefresh(provider);
  });

  test('alova: abort() of a method stops its hostRequest (fail "request:fail abort"), nothing replayed', async () => {
    const { client } = await expired('wx');
    service.hits.length = 0;
    const alova = createAlova({ baseURL: service.url, requestAdapter: hostRequestAdapter(client), cacheFor: null });
    const method = alova.Get('/slow/3000');
    const sent = method.send().catch((e: unknown) => e);
    method.abort();
    const error = (await sent) as { errMsg?: string };
    expect(error.errMsg).toBe('request:fail abort');
  });

  test('luch-request (uni.request routed through client.hostRequest under baseUrl): GETs and POSTs; another origin still goes to the host', async () => {
    const { host, client, provider } = await expired('uni');
    const uni = { request: host.request as (options: HostRequestCall) => unknown };
    (globalThis as Record<string, unknown>).uni = uni;
    routeThroughClient(uni, client, service.url);
    const http = new Request({ baseURL: service.url });
    const results = await Promise.all(Array.from({ length: N }, (_, i) => (i % 2 ? http.post('/l/' + i, { i }) : http.get('/l/' + i))));
    expect(results.map((r) => [r.statusCode, (r.data as Echo).data.method, (r.data as Echo).data.path])).toEqual(
      results.map((_, i) => [200, i % 2 ? 'POST' : 'GET', '/l/' + i]),
    );
    expect(results.filter((_, i) => i % 2).map((r) => JSON.parse((r.data as Echo).data.body))).toEqual(results.flatMap((_, i) => (i % 2 ? [{ i }] : [])));
    oneRefresh(provider);
    // A URL outside baseUrl is the host's own call: no Bearer goes there.
    const before = host.calls.length;
    await http.get('http://127.0.0.1:9/elsewhere').catch(() => undefined);
    expect(host.calls.length).toBe(before + 1);
    expect(host.calls.at(-1)!.header).not.toHaveProperty('authorization');
    // luch-request's validateStatus: a 404 from hostRequest's success rejects there, as with uni.request.
    const missing = await http.get('/status/404').catch((e: { statusCode: number }) => e);
    expect((missing as { statusCode: number }).statusCode).toBe(404);
  });
});
