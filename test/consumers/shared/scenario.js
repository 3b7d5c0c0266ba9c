// The page's call, shared by the Taro and uni-app consumer pages (copied into each project's
// src/ by test/consumers/miniprogram-frameworks.mjs). It is the code a user writes: no
// `request` option, so createClient must find the host (wx.request) by itself. The harness
// gives the URLs through storage and reads the report back from storage.
import { createClient, isChannelError } from 'channel-sdk/miniprogram';

/**
 * @param {{ call(method: string, url: string): Promise<any>, uploadFile: Function, getStorageSync(key: string): any, setStorageSync(key: string, value: unknown): void }} host
 *   the framework's own request (Taro.request, uni.request), uploadFile (Taro.uploadFile,
 *   uni.uploadFile) and storage API
 */
export async function runScenario(host) {
  const config = host.getStorageSync('channel-sdk-e2e');
  const report = { provider: [], unauthorized: 0, retries: 0, uploadProgress: [], downloadProgress: [] };
  try {
    const client = createClient({
      baseUrl: config.sandboxUrl,
      tokenProvider: ({ forceRefresh }) => {
        report.provider.push(forceRefresh);
        return host.call('GET', config.backendUrl + '/channel-token' + (forceRefresh ? '?force=1' : '')).then((body) => body.access_token);
      },
      // The framework's own uploadFile, passed as the README shows; downloadFile is found (wx).
      uploadFile: host.uploadFile,
    });
    client.on('unauthorized', () => report.unauthorized++);
    client.on('retry', () => report.retries++);
    report.first = (await client.get(config.ordersPath)).orders.length;
    await host.call('POST', config.backendUrl + '/expire');
    report.afterExpiry = (await client.get(config.ordersPath)).orders.length;
    // A file up and one down, each on an expired token: its first attempt meets a 401, and
    // the file is sent (asked for) once more after the one forced refresh.
    await host.call('POST', config.backendUrl + '/expire');
    const echoed = await client.upload(config.echoPath, {
      filePath: config.uploadFilePath,
      name: 'photo',
      formData: { order_no: 'SO20240601001' },
      onProgress: (p) => report.uploadProgress.push(p.percent),
    });
    report.upload = { method: echoed.method, body: echoed.body };
    await host.call('POST', config.backendUrl + '/expire');
    report.download = await client.download(config.echoPath, {
      searchParams: { file: 'receipt' },
      onProgress: (p) => report.downloadProgress.push(p.percent),
    });
  } catch (error) {
    report.error = isChannelError(error) ? error.code + ': ' + error.message : String((error && error.stack) || error);
  }
  host.setStorageSync('channel-sdk-e2e-report', report);
  return report.error ? 'failed' : 'ok';
}
