import ky, { isKyError, isTimeoutError, type KyInstance, type Options as KyOptions } from 'ky';
import { ConfigError } from '../errors/ConfigError.js';
import { NetworkError } from '../errors/NetworkError.js';
import { TimeoutError } from '../errors/TimeoutError.js';
import type { Transport } from '../core/types.js';

/** ky options the SDK owns; everything else (hooks, credentials, ...) passes through. */
export type KyPassThrough = Omit<
  KyOptions,
  'method' | 'json' | 'body' | 'headers' | 'searchParams' | 'retry' | 'timeout' | 'throwHttpErrors' | 'signal' | 'prefix' | 'baseUrl' | 'fetch'
>;

const owned = ['method', 'json', 'body', 'headers', 'searchParams', 'retry', 'timeout', 'throwHttpErrors', 'signal', 'prefix', 'baseUrl', 'prefixUrl', 'fetch'];

/**
 * A transport over ky. ky's own retry is off (the core retries, with the same policy on
 * every transport) and non-2xx statuses resolve, so the core sees every response.
 */
export function createFetchTransport(options: { fetch?: typeof fetch; ky?: KyPassThrough } = {}): Transport {
  const pass = options.ky || {};
  for (const key of owned) {
    if (key in pass) throw new ConfigError('ky.' + key + ' is set by channel-sdk; use the client or request option of that name instead');
  }
  const api: KyInstance = ky.create({ ...pass, retry: 0, throwHttpErrors: false, ...(options.fetch ? { fetch: options.fetch } : {}) });
  return async ({ method, url, headers, body, timeout, signal }) => {
    const deadline = Date.now() + timeout;
    const timedOut = () => new TimeoutError('no complete response within ' + timeout + ' ms (timeout)', { method, url });
    let response: Response;
    try {
      response = await api(url, { method, headers, body, timeout, signal: signal as AbortSignal | undefined });
    } catch (error) {
      if (signal && signal.aborted) throw error; // the core turns this into AbortError
      if (isTimeoutError(error)) throw timedOut();
      // ky's errors hold the Request, and with it the Authorization header: keep only the cause.
      const cause = isKyError(error) ? error.cause : error;
      throw new NetworkError('network error: ' + messageOf(cause), { method, url, cause });
    }
    // ky's timeout stops at the headers; the body must arrive within the same attempt budget.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        response.body?.cancel().catch(() => {});
        reject(timedOut());
      }, Math.max(0, deadline - Date.now()));
    });
    try {
      return { status: response.status, headers: response.headers, body: await Promise.race([response.text(), stalled]) };
    } finally {
      clearTimeout(timer);
    }
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message + (error.cause instanceof Error ? ' (' + error.cause.message + ')' : '') : 'unknown cause';
}
