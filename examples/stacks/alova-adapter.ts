import type { AlovaRequestAdapter } from 'alova';
import type { Client, HostRequestResult } from 'channel-sdk/miniprogram';

/**
 * alova's requestAdapter over client.hostRequest: every request alova sends carries the token,
 * and a 401 costs one refresh shared with the rest of the app, then one replay.
 * createAlova({ baseURL, requestAdapter: hostRequestAdapter(client), responded: (r) => r.data })
 */
export function hostRequestAdapter(client: Client): AlovaRequestAdapter<{ timeout?: number }, HostRequestResult, HostRequestResult['header']> {
  return (elements, method) => {
    const task = client.hostRequest({
      url: elements.url,
      method: elements.type.toUpperCase(),
      header: elements.headers as Record<string, string>,
      data: elements.data,
      ...(method.config.timeout ? { timeout: method.config.timeout } : {}),
    });
    return {
      response: () => task,
      headers: () => task.then((result) => result.header),
      abort: () => task.abort(),
    };
  };
}
