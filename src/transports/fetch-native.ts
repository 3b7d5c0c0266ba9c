import { TimeoutError } from '../errors/TimeoutError.js';
import type { Transport } from '../core/types.js';
import { networkError } from './fetch.js';

const noop = () => {};

/**
 * The transport of `client.fetch`'s attempts: the runtime's fetch (or the client's `fetch`
 * option) as it is, no ky. Resolves with the Response whatever its status, its body unread (a
 * response the core drops, such as the 401 before the replay, is cancelled). `timeout` bounds an
 * attempt up to the response headers; the caller's own AbortSignal (`passOn.signal`) also
 * stops the body it reads afterwards, as with fetch.
 */
export function createNativeFetch(own?: typeof fetch): Transport {
  return async ({ method, url, headers, body, timeout, signal, passOn = {} }) => {
    const controller = new AbortController();
    const abort = () => controller.abort(signal && signal.reason);
    if (signal) signal.addEventListener('abort', abort);
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      controller.abort();
    }, timeout);
    const given = passOn.signal as AbortSignal | undefined;
    try {
      const init: RequestInit = Object.assign({}, passOn.init, {
        method,
        headers,
        signal: given && AbortSignal.any ? AbortSignal.any([given, controller.signal]) : controller.signal,
      });
      if (body !== undefined) init.body = body as BodyInit;
      const response = await (own || fetch)((passOn.input || url) as RequestInfo, init);
      return {
        status: response.status,
        headers: response.headers,
        body: '',
        value: response,
        discard: () => void (response.body && response.body.cancel().then(noop, noop)),
      };
    } catch (error) {
      if (late) throw new TimeoutError('no response within ' + timeout + ' ms (timeout)', { method, url });
      // The core turns an abort into its AbortError.
      if (controller.signal.aborted || (given && given.aborted)) throw error;
      throw await networkError(method, url, error, own || fetch);
    } finally {
      clearTimeout(timer);
      if (signal) signal.removeEventListener('abort', abort);
    }
  };
}
