// src/pages/index/index.test.js: the orders page under vitest, against the running sandbox and your
// backend: createMockHost({ kind: 'uni' }) stands in for `uni`, and its calls to those two origins go
// over real HTTP (passThrough) under the host's rules. Without passThrough it answers in memory.
import { createMockHost } from 'channel-sdk/testing';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';

const SERVICE_URL = 'http://127.0.0.1:8787'; // the sandbox, as in src/channel.js
const BACKEND_URL = 'http://127.0.0.1:3000'; // your backend, which serves /channel-token

let host;
let restore;
beforeEach(() => {
  host = createMockHost({ kind: 'uni', passThrough: [SERVICE_URL, BACKEND_URL] });
  restore = host.install(); // globalThis.uni = host
  vi.resetModules(); // each test launches the app anew
});
afterEach(() => restore());

/** Opens the page as uni-app would: its data and methods, then onLoad. */
async function openPage() {
  const { default: Index } = await import('./index.vue');
  const page = { ...Index.data(), ...Index.methods };
  await Index.onLoad.call(page);
  return page;
}

/** What `npx channel-sandbox expire` does: every token issued so far now gets 401. */
const expire = () => fetch(SERVICE_URL + '/__sandbox/expire', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });

test('shows the orders; after the sandbox expires the token, one forced refresh and they show again', async () => {
  const page = await openPage();
  expect(page.orders.map((order) => order.order_no)).toContain('SO20240601001');
  const before = host.calls.length;
  await expire();
  await page.load(); // pull to refresh
  expect(page.error).toBe('');
  expect(page.orders.map((order) => order.order_no)).toContain('SO20240601001');
  const tokenCalls = host.calls.slice(before).filter((call) => call.url.startsWith(BACKEND_URL + '/channel-token'));
  expect(tokenCalls.map((call) => call.url)).toEqual([expect.stringMatching(/\/channel-token\?force=1&rejected=\w+$/)]);
});

test('when the token route refuses (nobody signed in), the page shows the error code', async () => {
  const { session } = await import('../../channel.js');
  session.id = 'nobody';
  const page = await openPage();
  expect(page).toMatchObject({ orders: [], error: 'TOKEN_PROVIDER_ERROR' });
});
