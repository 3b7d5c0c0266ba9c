// pages/orders/orders.sandbox.test.js: the same page under jest against the running sandbox and your
// backend: createMockHost's calls to those two origins go over real HTTP (passThrough) under WeChat's
// rules, so the test meets the real token route and the real 401s.
const { createMockHost } = require('channel-sdk/testing');

const SERVICE_URL = 'http://127.0.0.1:8787'; // the sandbox, as in channel.js
const BACKEND_URL = 'http://127.0.0.1:3000'; // your backend, which serves /channel-token

let host;
let restore;
beforeEach(() => {
  host = createMockHost({ passThrough: [SERVICE_URL, BACKEND_URL] });
  restore = host.install(); // global.wx = host
  global.App = (app) => (global.getApp = () => app);
  jest.resetModules(); // each test launches the mini-program anew
  require('../../app.js');
});
afterEach(() => restore());

/** Opens the page as WeChat would: its Page({...}), with data and setData, then onLoad. */
async function openPage() {
  let page;
  global.Page = (definition) => {
    page = { ...definition, data: { ...definition.data }, setData: (patch) => Object.assign(page.data, patch) };
  };
  require('./orders.js');
  await page.onLoad();
  return page;
}

/** What `npx channel-sandbox expire` does: every token issued so far now gets 401. */
const expire = () => fetch(SERVICE_URL + '/__sandbox/expire', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });

test('against the sandbox: the orders; after it expires the token, one forced refresh and they show again', async () => {
  const page = await openPage();
  expect(page.data.orders.map((order) => order.order_no)).toContain('SO20240601001');
  const before = host.calls.length;
  await expire();
  await page.load(); // pull to refresh
  expect(page.data.error).toBe('');
  const tokenCalls = host.calls.slice(before).filter((call) => call.url.startsWith(BACKEND_URL + '/channel-token'));
  expect(tokenCalls.map((call) => call.url)).toEqual([expect.stringMatching(/\/channel-token\?force=1&rejected=\w+$/)]);
});
