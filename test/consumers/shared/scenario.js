// The page's call, shared by the Taro and uni-app consumer pages (copied into each project's
// src/ by test/consumers/miniprogram-frameworks.mjs). It is the code a user writes: no
// `request` option, so createClient must find the host (wx.request) by itself. The harness
// gives the URLs through storage and reads the report back from storage.
import { createClient, isChannelError } from 'channel-sdk/miniprogram';

/**
 * @param {{ call(method: string, url: string): Promise<any>, getStorageSync(key: string): any, setStorageSync(key: string, value: unknown): void }} host
 *   the framework's own request (Taro.request, uni.request) and storage API
 */
export async function runScenario(host) {
  const config = host.getStorageSync('channel-sdk-e2e');
  const report = { provider: [], unauthorized: 0, retries: 0 };
  try {
    const client = createClient({
      baseUrl: config.sandboxUrl,
      tokenProvider: ({ forceRefresh }) => {
        report.provider.push(forceRefresh);
        return host.call('GET', config.backendUrl + '/channel-token' + (forceRefresh ? '?force=1' : '')).then((body) => body.access_token);
      },
    });
    client.on('unauthorized', () => report.unauthorized++);
    client.on('retry', () => report.retries++);
    report.first = (await client.get(config.ordersPath)).orders.length;
    await host.call('POST', config.backendUrl + '/expire');
    report.afterExpiry = (await client.get(config.ordersPath)).orders.length;
  } catch (error) {
    report.error = isChannelError(error) ? error.code + ': ' + error.message : String(error && error.stack || error);
  }
  host.setStorageSync('channel-sdk-e2e-report', report);
  return report.error ? 'failed' : 'ok';
}
