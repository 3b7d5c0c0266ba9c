// The SDK comes from WeChat's npm build (miniprogram_npm/channel-sdk, copied from the
// package's miniprogram_dist/): CommonJS, ES2017, no dependencies, no fetch.
const { createClient, createCancelToken, isChannelError } = require('channel-sdk/miniprogram'); // miniprogram_npm/channel-sdk/miniprogram.js after Build npm
const { partnerBackend } = require('../../config.js');

// wx.request as a promise, for the demo backend's own routes.
function call(method, path) {
  return new Promise((resolve, reject) =>
    wx.request({ url: partnerBackend + path, method, success: (r) => resolve(r.data), fail: (e) => reject(new Error(e.errMsg)) }),
  );
}

Page({
  data: { user: 'wx-user-1', lines: [], counters: { provider: 0, unauthorized: 0, retries: 0, ok: 0, failed: 0 } },

  async onLoad() {
    this.cancel = createCancelToken();
    const config = await call('GET', '/api/config');
    this.paths = config.paths;
    this.client = createClient({
      baseUrl: config.sandboxUrl,
      // request is detected (wx.request); 10 requests at most in flight, the rest queued.
      tokenProvider: ({ forceRefresh, rejected }) => {
        this.count('provider');
        this.log(`tokenProvider({ forceRefresh: ${forceRefresh} })`);
        return call('GET', `/api/channel-token?user=${encodeURIComponent(this.data.user)}${forceRefresh ? '&force=1&rejected=' + (rejected || '') : ''}`).then(
          (body) => body.access_token,
        );
      },
    });
    this.client.on('unauthorized', ({ attempt }) => (this.count('unauthorized'), this.log(`attempt ${attempt}: 401`)));
    this.client.on('retry', ({ attempt, reason }) => (this.count('retries'), this.log(`retry as attempt ${attempt} (${reason})`)));
    this.client.on('token', ({ reason, version }) => this.log(`new token v${version} (${reason})`));
    this.client.on('auth:failed', () => this.log('auth:failed: sign in again'));
  },

  onUnload() {
    this.cancel.cancel('page closed'); // aborts requests still in flight (RequestTask.abort)
  },

  count(name) {
    this.setData({ [`counters.${name}`]: this.data.counters[name] + 1 });
  },

  log(text) {
    const time = new Date().toTimeString().slice(0, 8);
    this.setData({ lines: this.data.lines.concat(`${time}  ${text}`).slice(-200) });
  },

  async callOnce(i) {
    try {
      const data = await this.client.get(this.paths.orders, { signal: this.cancel.signal });
      this.count('ok');
      this.log(`call${i === undefined ? '' : ' #' + i}: ${data.orders.length} orders`);
    } catch (error) {
      this.count('failed');
      this.log(isChannelError(error) ? `${error.code}: ${error.message}` : String(error));
    }
  },

  onCall() {
    this.callOnce();
  },

  async onExpire() {
    await call('POST', '/api/control/expire');
    this.log('all tokens expired: the next calls get 401 once, then succeed');
  },

  async onBurst() {
    this.log('5 calls at once');
    await Promise.all([0, 1, 2, 3, 4].map((i) => this.callOnce(i)));
  },

  onClear() {
    this.setData({ lines: [], counters: { provider: 0, unauthorized: 0, retries: 0, ok: 0, failed: 0 } });
  },
});
