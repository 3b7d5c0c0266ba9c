// channel.js: one client for the whole mini-program. While you try it the service is the sandbox and
// your backend runs on this machine (DevTools: tick "Does not verify valid domain names").
const { createClient, hostTokenStore } = require('channel-sdk/miniprogram');

const SERVICE_URL = 'http://127.0.0.1:8787'; // in production: your service's https URL, allow-listed
const BACKEND_URL = 'http://127.0.0.1:3000'; // in production: your backend's

module.exports = createClient({
  baseUrl: SERVICE_URL,
  tokenProvider: ({ forceRefresh, rejected }) =>
    new Promise((resolve, reject) =>
      wx.request({
        url: BACKEND_URL + '/channel-token' + (forceRefresh ? '?force=1&rejected=' + (rejected || '') : ''),
        header: { 'x-session': getApp().globalData.session }, // no cookies here: the token route reads x-session
        success: (r) =>
          r.statusCode === 200
            ? resolve(/** @type {{ access_token: string }} */ (r.data).access_token)
            : reject(new Error('token route answered ' + r.statusCode)),
        fail: (e) => reject(new Error(e.errMsg)),
      }),
    ),
  tokenStore: hostTokenStore({ key: () => getApp().globalData.userId }), // a cold start reuses the token while it lasts
});
