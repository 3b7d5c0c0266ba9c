// @vitest-environment node
// client.fetch (issue #32) as the `fetch` of the request stacks partners already use, each the real
// library (pinned devDependencies), in-process against the fake service over real HTTP. A storm
// through each, on a token the service has ended, costs one forced refresh and every call succeeds.
import { isAxiosError } from 'axios';
import { gql } from 'graphql-request';
import { FetchError } from 'ofetch';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { readmeBlocks, syncExamples } from '../../scripts/readme.mjs';
import { createClient, isRetryable, type TimeoutError } from '../../src/index.js';
import { createAxios } from '../../examples/stacks/axios-fetch.js';
import { createGraphQL } from '../../examples/stacks/graphql-request.js';
import { createApiFetch } from '../../examples/stacks/ofetch.js';
import { createApi } from '../../examples/stacks/openapi-fetch.js';
import { QueryClient } from '@tanstack/query-core';
import { channelQuery, queryClient } from '../../examples/stacks/tanstack-query.js';
import { fakeServices, providerFor } from '../conformance/suite.js';
import type { FakeService } from '../helpers/fake-service.js';

const start = fakeServices();
const N = 60;

interface Echo {
  code: number;
  data: { method: string; path: string; body: string };
}

/** A client whose token the service has just ended: the next calls all meet a 401 first. */
async function expired(service: FakeService) {
  const provider = providerFor(service, 5);
  const client = createClient({ baseUrl: service.url, tokenProvider: provider });
  await (await client.fetch('/warm')).arrayBuffer();
  service.expireAll();
  service.hits.length = 0;
  return { client, provider };
}

/** Each call was sent twice (the 401, the replay) with one new token, and answered 200. */
function oneRefresh(service: FakeService, provider: ReturnType<typeof providerFor>) {
  expect(provider.forced()).toBe(1);
  expect(service.hits).toHaveLength(2 * N);
  expect(service.hits.filter((h) => h.status === 401)).toHaveLength(N);
  expect(new Set(service.hits.filter((h) => h.status === 200).map((h) => h.token))).toEqual(new Set([service.issued.at(-1)]));
}

const payload = (i: number) => ({ i, note: 'x'.repeat(i) });

describe('client.fetch under the real request stacks: a storm costs one forced refresh', () => {
  test('openapi-fetch (createClient({ fetch: client.fetch })): GET with path params and POST bodies', async () => {
    const service = await start();
    const { client, provider } = await expired(service);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- no OpenAPI document here: the paths are untyped.
    const api = createApi<any>(client, service.url);
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        i % 2 ? api.POST('/orders/{id}', { params: { path: { id: i } }, body: payload(i) }) : api.GET('/orders/{id}', { params: { path: { id: i } } }),
      ),
    );
    expect(results.map((r) => [r.response.status, r.error])).toEqual(results.map(() => [200, undefined]));
    const echoes = results.map((r) => (r.data as Echo).data);
    expect(echoes.map((e) => [e.method, e.path, e.body ? JSON.parse(e.body) : ''])).toEqual(
      echoes.map((_, i) => [i % 2 ? 'POST' : 'GET', '/orders/' + i, i % 2 ? payload(i) : '']),
    );
    oneRefresh(service, provider);
  });

  test('ofetch (createFetch({ fetch: client.fetch })): JSON bodies, parsed answers; its own retry leaves a 401 alone', async () => {
    const service = await start();
    const { client, provider } = await expired(service);
    const $fetch = createApiFetch(client, service.url);
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) => (i % 2 ? $fetch<Echo>('/o/' + i, { method: 'POST', body: payload(i) }) : $fetch<Echo>('/o/' + i, { query: { i } }))),
    );
    expect(results.map((r) => [r.data.method, r.data.path, r.data.body ? JSON.parse(r.data.body) : ''])).toEqual(
      results.map((_, i) => [i % 2 ? 'POST' : 'GET', '/o/' + i + (i % 2 ? '' : '?i=' + i), i % 2 ? payload(i) : '']),
    );
    oneRefresh(service, provider);
    // A second 401 resolves as a Response; ofetch throws its FetchError, which isRetryable reads.
    service.rejectAll(true);
    const error = await $fetch('/o/denied').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchError);
    expect((error as FetchError).status).toBe(401);
    expect(isRetryable(error)).toBe(false);
  });

  test('#42 item 4: ofetch’s `timeout` through client.fetch is a timeout: FetchError over the SDK’s TimeoutError, which isRetryable calls worth another try', async () => {
    const service = await start();
    const { client } = await expired(service);
    const $fetch = createApiFetch(client, service.url);
    const error = (await $fetch('/slow/3000', { timeout: 100, retry: 0 }).catch((e: unknown) => e)) as FetchError;
    expect(error).toBeInstanceOf(FetchError);
    expect([(error.cause as TimeoutError).code, ((error.cause as TimeoutError).cause as Error).name, isRetryable(error)]).toEqual([
      'TIMEOUT',
      'TimeoutError',
      true,
    ]);
  });

  test("axios (adapter: 'fetch', env: { fetch: client.fetch }): GET and JSON POST through axios's fetch adapter", async () => {
    const service = await start();
    const { client, provider } = await expired(service);
    const api = createAxios(client, service.url);
    const results = await Promise.all(Array.from({ length: N }, (_, i) => (i % 2 ? api.post<Echo>('/x/' + i, payload(i)) : api.get<Echo>('/x/' + i))));
    expect(results.map((r) => [r.status, r.data.data.method, r.data.data.path, r.data.data.body ? JSON.parse(r.data.data.body) : ''])).toEqual(
      results.map((_, i) => [200, i % 2 ? 'POST' : 'GET', '/x/' + i, i % 2 ? payload(i) : '']),
    );
    oneRefresh(service, provider);
    // axios rejects a 4xx with an AxiosError carrying the status; isRetryable reads it.
    const error = await api.get('/status/404').catch((e: unknown) => e);
    expect(isAxiosError(error) && error.response?.status).toBe(404);
    expect(isRetryable(error)).toBe(false);
    expect(isRetryable(await api.get('/status/503').catch((e: unknown) => e))).toBe(true);
  });

  test('graphql-request (new GraphQLClient(url, { fetch: client.fetch })): queries as POSTs', async () => {
    const service = await start();
    const { client, provider } = await expired(service);
    const graph = createGraphQL(client, service.url + '/graphql');
    const query = gql`
      query Order($id: Int!) {
        order(id: $id) {
          id
        }
      }
    `;
    // The fake service answers { code, data: { method, path, body } }: graphql-request hands back `data`.
    const results = await Promise.all(Array.from({ length: N }, (_, i) => graph.request<Echo['data']>(query, { id: i })));
    expect(results.map((r) => [r.method, r.path, (JSON.parse(r.body) as { variables: unknown }).variables])).toEqual(
      results.map((_, i) => ['POST', '/graphql', { id: i }]),
    );
    oneRefresh(service, provider);
  });

  test("TanStack Query (queryFn with client.fetch, retry: isRetryable): one refresh, no retry of a 401 after the replay or a 404, a 503 retried by the caller's rule", async () => {
    const service = await start();
    const { client, provider } = await expired(service);
    // The recipe's client and queryFn; retryDelay 1 ms here only, so that the retries take no time.
    const queries = queryClient;
    const queryFn = channelQuery<Echo>(client);
    const fetchQuery = (path: string) => queries.fetchQuery({ queryKey: [path], queryFn, retryDelay: 1 });
    const results = await Promise.all(Array.from({ length: N }, (_, i) => fetchQuery('/q/' + i)));
    expect(results.map((r) => r.data.path)).toEqual(results.map((_, i) => '/q/' + i));
    oneRefresh(service, provider);
    service.hits.length = 0;
    const failed = await Promise.all(['/status/404', '/status/503'].map((path) => fetchQuery(path).catch((e: unknown) => e)));
    expect(failed.map((e) => (e as { status: number }).status)).toEqual([404, 503]);
    // 404: one attempt. 503: the first and three retries by TanStack Query (the SDK adds none of its own to a native call).
    expect(service.hits.map((h) => h.path).toSorted()).toEqual(['/status/404', ...Array(4).fill('/status/503')]);
    // A 401 after the SDK's own replay: the caller's rule does not try it again (#8164, refine #6706).
    service.hits.length = 0;
    service.rejectAll(true);
    const denied = await fetchQuery('/denied').catch((e: unknown) => e);
    expect((denied as { status: number }).status).toBe(401);
    expect(service.hits.map((h) => h.status)).toEqual([401, 401]);
    expect(provider.forced()).toBe(2);
    queries.clear();
  });
});

describe('#42 item 2: a stack that retries what clearToken() fenced', () => {
  /** Whose token it is (the fake service puts the user in `sub`). */
  const userOf = (token: string | undefined) =>
    token ? (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { sub: string }).sub : undefined;

  /**
   * Alice's session, her app's backend still alive for a moment after clearToken() (the logout
   * under way there): a provider call then still answers for her. Each provider call is recorded
   * with the user it answered for and whether it came after the clear.
   */
  async function session() {
    const service = await start();
    const state = { user: 'alice', cleared: false };
    const calls: Array<[string, boolean]> = [];
    const client = createClient({
      baseUrl: service.url,
      tokenProvider: async () => (calls.push([state.user, state.cleared]), service.issue(state.user)),
    });
    await (await client.fetch('/warm')).arrayBuffer();
    /** Attempts the client sent after the clear, by path: what a stack's retry got onto the wire. */
    const afterClear: string[] = [];
    client.on('request', ({ url }) => void (state.cleared && afterClear.push(url.slice(service.url.length))));
    /**
     * clearToken() once `path` is on the wire (its first attempt sent 30 ms ago: the service holds it 1 s), or with `on: 'response'`
     * once its answer's headers came 30 ms ago (the call resolved; its body arrives); then Bob signs in and makes his first request.
     */
    const logoutDuring = async (path: string, send: () => Promise<unknown>, on: 'request' | 'response' = 'request') => {
      const sent = new Promise<void>((resolve) => client.on(on, ({ url }) => void (url.endsWith(path) && setTimeout(resolve, 30))));
      const pending = send();
      await sent;
      client.clearToken();
      state.cleared = true;
      const outcome = await pending.then(
        () => 'resolved',
        (e: unknown) => e,
      );
      state.user = 'bob';
      const bob = await client.fetch('/bob-first');
      expect(bob.status).toBe(200);
      return outcome;
    };
    return { service, client, calls, afterClear, logoutDuring };
  }

  /** Nothing of Alice's was sent again after the clear, no provider call answered for her after it, and Bob's first request carried a token asked for him. */
  function fenced(service: FakeService, calls: Array<[string, boolean]>, afterClear: string[]) {
    expect(afterClear).toEqual(['/bob-first']);
    expect(calls.filter(([user, after]) => user === 'alice' && after)).toEqual([]);
    expect(calls.at(-1)).toEqual(['bob', true]);
    expect(userOf(service.hits.find((h) => h.path === '/bob-first')?.token)).toBe('bob');
  }

  test('ofetch as the README’s recipe, with `timeout` and `retry`: its retry (same signal) is refused unsent; Bob’s first request carries his own token', async () => {
    const { service, client, calls, afterClear, logoutDuring } = await session();
    const $fetch = createApiFetch(client, service.url);
    // /slow/1000 is held on the wire when the clear comes; ofetch's timeout makes it retry an AbortError.
    const error = await logoutDuring('/slow/1000', () => $fetch('/slow/1000', { timeout: 5000, retry: 2, retryDelay: 0 }));
    expect(error).toBeInstanceOf(FetchError);
    expect((((error as FetchError).cause as Error & { code: string }) ?? {}).code).toBe('ABORTED');
    fenced(service, calls, afterClear);
  });

  test('TanStack Query with its default retry (3 tries, any error): the retries (same signal) are refused unsent; Bob’s first request carries his own token', async () => {
    const { service, client, calls, afterClear, logoutDuring } = await session();
    // retry: 3 is its default in a browser (none on a server, as here).
    const queries = new QueryClient({ defaultOptions: { queries: { retry: 3, retryDelay: 1 } } });
    const queryFn = channelQuery<Echo>(client);
    const error = await logoutDuring('/slow/1000', () => queries.fetchQuery({ queryKey: ['/slow/1000'], queryFn }));
    expect((error as Error & { code: string }).code).toBe('ABORTED');
    fenced(service, calls, afterClear);
    queries.clear();
  });

  test('TanStack Query with its default retry, the logout while the body is still arriving: the retries (same signal) are refused unsent; Bob’s first request carries his own token', async () => {
    const { service, client, calls, afterClear, logoutDuring } = await session();
    const queries = new QueryClient({ defaultOptions: { queries: { retry: 3, retryDelay: 1 } } });
    // 64 KiB, 1 KiB every 20 ms: the call has resolved (its headers came) and its queryFn reads the body when the clear comes.
    // Before the fix the fence ended the read but not the signal: TanStack Query sent the call 3 times more after the clear,
    // a provider call answered for Alice after it, and Bob's first request carried her token.
    const path = '/slow-download/65536/20';
    const error = await logoutDuring(path, () => queries.fetchQuery({ queryKey: [path], queryFn: channelQuery<Echo>(client) }), 'response');
    expect((error as Error & { code: string }).code).toBe('ABORTED');
    fenced(service, calls, afterClear);
    queries.clear();
  });

  test('axios with a retry of its own (an interceptor re-sending error.config, as axios-retry does): with isRetryable as its condition nothing is re-sent', async () => {
    const { service, client, calls, afterClear, logoutDuring } = await session();
    const api = createAxios(client, service.url);
    api.interceptors.response.use(undefined, (error: { config: object }) => (isRetryable(error) ? api.request(error.config) : Promise.reject(error)));
    const error = await logoutDuring('/slow/1000', () => api.get('/slow/1000'));
    expect(isAxiosError(error) && error.code).toBe('ABORTED');
    fenced(service, calls, afterClear);
  });
});

test('docs/guide/request-stacks.md shows every recipe of examples/stacks, each block verbatim from its file', () => {
  const guide = readFileSync('docs/guide/request-stacks.md', 'utf8');
  const shown = readmeBlocks(guide).map((b: { marker?: string; argument?: string }) => (b.marker === 'example' ? b.argument : 'unmarked'));
  expect(shown.toSorted()).toEqual(
    readdirSync('examples/stacks')
      .map((f) => 'examples/stacks/' + f)
      .toSorted(),
  );
  expect(syncExamples(guide) === guide ? 'verbatim' : 'a block differs from its example file: npm run readme').toBe('verbatim');
});
