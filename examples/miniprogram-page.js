// pages/orders/orders.js in a WeChat mini-program ("Tools > Build npm" first). uni-app and Taro
// projects import the same path: import { createClient } from 'channel-sdk/miniprogram'.
const { createClient, createCancelToken, hostTokenStore, isChannelError } = require('channel-sdk/miniprogram');

const app = getApp(); // globalData.session and .userId: what your login stored

const client = createClient({
  baseUrl: 'https://channel.example.com', // add it to the request domain allow-list
  // wx.request is found by itself (my, tt, swan, qq, uni and Taro too).
  tokenProvider: ({ forceRefresh, rejected }) =>
    new Promise((resolve, reject) =>
      wx.request({
        url: 'https://partner.example.com/channel-token' + (forceRefresh ? '?force=1&rejected=' + (rejected || '') : ''),
        header: { 'x-session': app.globalData.session }, // no cookies here: the token route reads x-session
        success: (r) =>
          r.statusCode === 200
            ? resolve(/** @type {{ access_token: string }} */ (r.data).access_token)
            : reject(new Error('token route answered ' + r.statusCode)),
        fail: (e) => reject(new Error(e.errMsg)),
      }),
    ),
  // Keeps the token through a cold start, bound to the user signed in when it was asked for.
  tokenStore: hostTokenStore({ key: () => app.globalData.userId }),
});

let cancel = createCancelToken();

Page({
  data: { orders: /** @type {Array<{ order_no: string }>} */ ([]), error: '' },
  onLoad() {
    cancel = createCancelToken();
    return client // settles once the page shows the orders or the error (a test can await it)
      .get('/open/api/v1/sdk/orders', { signal: cancel.signal })
      .then((data) => this.setData({ orders: /** @type {{ orders: Array<{ order_no: string }> }} */ (data).orders }))
      .catch((error) => (isChannelError(error) && error.code === 'ABORTED' ? undefined : this.setData({ error: String(error.code || error) })));
  },
  onUnload: () => cancel.cancel('page closed'),
});
