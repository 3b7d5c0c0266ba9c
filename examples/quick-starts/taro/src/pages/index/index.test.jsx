// src/pages/index/index.test.jsx: the orders page under vitest, against the running sandbox and your
// backend: createMockHost({ kind: 'Taro' }) stands in for Taro's API, and its calls to those two origins
// go over real HTTP (passThrough) under the host's rules. Without passThrough it answers in memory.
import { createMockHost } from 'channel-sdk/testing';
import { act, create } from 'react-test-renderer';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';

const SERVICE_URL = 'http://127.0.0.1:8787'; // the sandbox, as in src/channel.js
const BACKEND_URL = 'http://127.0.0.1:3000'; // your backend, which serves /channel-token

// Taro's API is the host; its page hooks run as a mini-program runs them (onLoad once, pull-down on demand).
const page = vi.hoisted(() => ({ pullDownRefresh: () => {} }));
vi.mock('@tarojs/taro', async () => {
  const { useEffect } = await import('react');
  return {
    // Read at each call: the mock is made once per file, each test installs its own host.
    default: new Proxy({}, { get: (_, name) => globalThis.Taro[name] }),
    useLoad: (onLoad) => useEffect(() => void onLoad(), []),
    usePullDownRefresh: (onPull) => void (page.pullDownRefresh = onPull),
  };
});
vi.mock('@tarojs/components', () => ({ View: 'view', Text: 'text' }));

let host;
let restore;
beforeEach(() => {
  host = createMockHost({ kind: 'Taro', passThrough: [SERVICE_URL, BACKEND_URL] });
  host.stopPullDownRefresh = () => {}; // what else the page calls on Taro, you add
  restore = host.install(); // globalThis.Taro = host
  vi.resetModules(); // each test launches the app anew
});
afterEach(() => restore());

/** Renders the page; resolves to a function that reads what it shows. */
async function openPage() {
  const { default: Index } = await import('./index.jsx');
  let tree;
  await act(async () => void (tree = create(<Index />)));
  return () => JSON.stringify(tree.toJSON());
}

/** What `npx channel-sandbox expire` does: every token issued so far now gets 401. */
const expire = () => fetch(SERVICE_URL + '/__sandbox/expire', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });

test('shows the orders; after the sandbox expires the token, one forced refresh and they show again', async () => {
  const shown = await openPage();
  await vi.waitFor(() => expect(shown()).toContain('SO20240601001'));
  const before = host.calls.length;
  await expire();
  await act(() => page.pullDownRefresh());
  expect(shown()).toContain('SO20240601001');
  expect(shown()).not.toMatch(/ERROR|UNAUTHORIZED/);
  const tokenCalls = host.calls.slice(before).filter((call) => call.url.startsWith(BACKEND_URL + '/channel-token'));
  expect(tokenCalls.map((call) => call.url)).toEqual([expect.stringMatching(/\/channel-token\?force=1&rejected=\w+$/)]);
});

test('when the token route refuses (nobody signed in), the page shows the error code', async () => {
  const { session } = await import('../../channel.js');
  session.id = 'nobody';
  const shown = await openPage();
  await vi.waitFor(() => expect(shown()).toContain('TOKEN_PROVIDER_ERROR'));
  const tokenCalls = host.calls.filter((call) => call.url.startsWith(BACKEND_URL + '/channel-token'));
  expect(tokenCalls.map((call) => call.status)).toEqual([401]); // asked through this test's host
});
