/**
 * channel-sdk for mini-programs (WeChat, Alipay, Douyin, Baidu, QQ, uni-app, Taro): the same
 * `createClient` as the browser entry, over the host's `request()`. No fetch, no ky.
 * @packageDocumentation
 */
import { createCoreClient, type Client } from './core/client.js';
import type { CoreClientOptions } from './core/types.js';
import { ConfigError } from './errors/ConfigError.js';
import { findHost, hostGlobals } from './transports/hosts.js';
import { createMiniProgramTransport, type HostRequest } from './transports/miniprogram.js';

/** Options of the mini-program `createClient`. */
export interface MiniProgramClientOptions extends CoreClientOptions {
  /**
   * The host's request function, e.g. `wx.request`, `my.request`, `uni.request`, `Taro.request`.
   * @default the first of wx, my, tt, swan, qq, uni, Taro found
   */
  request?: HostRequest;
  /** Requests in flight at once; more wait in a queue instead of failing (WeChat allows 10). @default 10 */
  concurrency?: number;
}

/**
 * Creates a client over the mini-program host's `request()`; options, behaviour, events and
 * errors are those of the browser entry.
 * @example
 * const client = createClient({
 *   baseUrl: 'https://api.example.com',
 *   tokenProvider: ({ forceRefresh }) => new Promise((resolve, reject) => wx.request({
 *     url: 'https://partner.example.com/channel-token' + (forceRefresh ? '?force=1' : ''),
 *     success: (r) => resolve(r.data.access_token), fail: reject,
 *   })),
 * });
 */
export function createClient(options: MiniProgramClientOptions): Client {
  const o = options || ({} as MiniProgramClientOptions);
  let request = o.request;
  let name = 'request option';
  if (request === undefined) {
    const found = findHost('request');
    if (!found) {
      throw new ConfigError('no mini-program request() found: looked for wx, my, tt, swan, qq, uni and Taro; pass request (e.g. request: wx.request) explicitly');
    }
    name = found[0];
    const host = found[1] as { request: HostRequest };
    // Bound: some hosts' request needs its object as `this`.
    request = (opts) => host.request(opts);
  } else if (typeof request !== 'function') {
    throw new ConfigError('request must be the host request function, e.g. request: wx.request');
  } else {
    name = hostGlobals().filter(([, host]) => host.request === request)[0]?.[0] ?? name;
  }
  const { concurrency = 10 } = o;
  if (!(concurrency >= 1 && concurrency % 1 === 0)) throw new ConfigError('concurrency must be a whole number >= 1 (WeChat allows 10 requests at once)');
  // Douyin and Baidu only know 'string' for a raw body; the others take 'text'.
  const dataType = name === 'tt' || name === 'swan' ? 'string' : 'text';
  return createCoreClient(o, { transport: createMiniProgramTransport({ request, dataType, concurrency }) }, ['request', 'concurrency']);
}

export type { HostHeaders, HostRequest, HostRequestOptions, HostResult } from './transports/miniprogram.js';
export { hostTokenStore } from './tokens/host-store.js';
export type { HostStorage, HostTokenStoreOptions } from './tokens/host-store.js';
export * from './client-exports.js';
