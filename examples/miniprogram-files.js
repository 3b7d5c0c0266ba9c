// pages/photo/photo.js: a photo up and an invoice down (the sandbox's paths; yours: your service's file endpoints).
const { createClient, createCancelToken, isChannelError } = require('channel-sdk/miniprogram');

const client = createClient({
  baseUrl: 'https://channel.example.com', // allow-list it for request, uploadFile and downloadFile
  tokenProvider: ({ forceRefresh, rejected }) =>
    new Promise((resolve, reject) =>
      wx.request({
        url: 'https://partner.example.com/channel-token' + (forceRefresh ? '?force=1&rejected=' + (rejected || '') : ''),
        header: { 'x-session': getApp().globalData.session }, // as in the quick start
        success: (r) =>
          r.statusCode === 200
            ? resolve(/** @type {{ access_token: string }} */ (r.data).access_token)
            : reject(new Error('token route answered ' + r.statusCode)),
        fail: (e) => reject(new Error(e.errMsg)),
      }),
    ),
  // Found by themselves when left out; every host's own functions fit (my., tt., uni., Taro.).
  request: wx.request,
  uploadFile: wx.uploadFile,
  downloadFile: wx.downloadFile,
  hostOptions: { enableHttp2: true },
});
const cancel = createCancelToken();

Page({
  onUnload: () => cancel.cancel('page closed'), // aborts the transfer (task.abort())
  onChoose() {
    wx.chooseMedia({ count: 1, mediaType: ['image'], success: (r) => this.send(r.tempFiles[0].tempFilePath) });
  },
  /** @param {string} filePath */
  async send(filePath) {
    try {
      const onProgress = (/** @type {{ percent: number }} */ p) => this.setData({ percent: Math.round(p.percent * 100) });
      const photo = /** @type {{ url: string }} */ (
        await client.upload('/open/api/v1/sdk/photos', { filePath, name: 'file', formData: { order_no: 'SO20240601001' }, signal: cancel.signal, onProgress })
      );
      const { tempFilePath } = await client.download('/open/api/v1/sdk/invoices/SO20240601001', { signal: cancel.signal });
      this.setData({ photo: photo.url, invoice: tempFilePath });
    } catch (error) {
      if (!(isChannelError(error) && error.code === 'ABORTED')) this.setData({ error: String(error) });
    }
  },
});
