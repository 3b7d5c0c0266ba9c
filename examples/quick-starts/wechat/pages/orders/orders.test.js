// pages/orders/orders.test.js: the orders page under jest (`npx jest`), on createMockHost: no
// device, no server. The host answers the token route (/channel-token) and the sandbox's orders.
const { createMockHost } = require('channel-sdk/testing');

let host;
let restore;
beforeEach(() => {
  host = createMockHost(); // a WeChat host: wx.request, storage, files, 10 calls at most in flight
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

test('shows the orders; after the service expires the token, one forced refresh and they show again', async () => {
  const page = await openPage();
  expect(page.data.orders.map((order) => order.order_no)).toEqual(['SO20240601001', 'SO20240602002']);
  host.expireTokens(); // as after 15 minutes: the next call gets a 401
  await page.load(); // pull to refresh
  expect(page.data).toEqual({ orders: expect.arrayContaining([expect.objectContaining({ order_no: 'SO20240601001' })]), error: '' });
  expect(host.stats).toMatchObject({ tokenRouteCalls: 2, forcedRefreshes: 1, unauthorized: 1 });
});

test('a second launch within the token lifetime asks the token route nothing (hostTokenStore)', async () => {
  await openPage();
  jest.resetModules();
  require('../../app.js');
  const again = await openPage();
  expect([again.data.orders.length, host.stats.tokenRouteCalls]).toEqual([2, 1]);
});

test('when the token route refuses (nobody signed in), the page shows the error code', async () => {
  host.user = null;
  const page = await openPage();
  expect(page.data).toEqual({ orders: [], error: 'TOKEN_PROVIDER_ERROR' });
});
