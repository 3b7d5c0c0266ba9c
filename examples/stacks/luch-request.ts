import type { Client, HostRequestCall } from 'channel-sdk/miniprogram';

/**
 * luch-request (and other uni-app code) sends through `uni.request`: route the calls under
 * baseUrl through client.hostRequest, every other URL to the host as before. Create the client
 * with the host's own function first: createClient({ baseUrl, tokenProvider, request: uni.request }).
 */
export function routeThroughClient(host: { request: (options: HostRequestCall) => unknown }, client: Client, baseUrl: string): void {
  const own = host.request.bind(host);
  host.request = (options) => (options.url.startsWith(baseUrl + '/') ? client.hostRequest(options) : own(options));
}
