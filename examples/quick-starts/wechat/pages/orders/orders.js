// pages/orders/orders.js: the signed-in user's orders, from the service; pull down to reload.
const { isChannelError } = require('channel-sdk/miniprogram');
const client = require('../../channel.js');

Page({
  data: { orders: /** @type {Array<{ order_no: string, status: string }>} */ ([]), error: '' },
  onLoad() {
    return this.load(); // settles once the page shows the orders or the error (a test can await it)
  },
  onPullDownRefresh() {
    this.load().then(() => wx.stopPullDownRefresh());
  },
  load() {
    return client.get('/open/api/v1/sdk/orders').then(
      (data) => this.setData({ orders: /** @type {{ orders: Array<{ order_no: string, status: string }> }} */ (data).orders, error: '' }),
      (error) => this.setData({ error: isChannelError(error) ? error.code : String(error) }),
    );
  },
});
