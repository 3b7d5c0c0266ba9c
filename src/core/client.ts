import type { Emitter } from 'mitt';
import { isChannelError, type ChannelError } from '../errors/ChannelError.js';
import { ConfigError } from '../errors/ConfigError.js';
import { NetworkError } from '../errors/NetworkError.js';
import { UnauthorizedError } from '../errors/UnauthorizedError.js';
import { readResponse, validate } from './envelope.js';
import { createEvents, type ClientEvents, type RequestInfo } from './events.js';
import { milliseconds, normalizeHeaders, resolveOptions } from './options.js';
import { retryAfterMs, retryPolicy } from './retry.js';
import { abortError, raceSignal, sleep } from './signal.js';
import { createTokenManager, type HeldToken, type TokenManagerOptions } from './token-manager.js';
import type { CoreClientOptions, MethodOptions, RequestOptions, SignalLike, Transport, TransportResponse } from './types.js';
import { buildUrl } from './url.js';

/** A channel-sdk client. Create one per service base URL and keep it. */
export interface Client {
  /**
   * Sends a request with `Authorization: Bearer <token>` and resolves to the envelope's `data`.
   * @example
   * const order = await client.request('/open/api/v1/sdk/orders/1', { method: 'PUT', json: { note } });
   */
  request<T = unknown>(path: string, options?: RequestOptions<T>): Promise<T>;
  /** `request` with method GET. */
  get<T = unknown>(path: string, options?: MethodOptions<T>): Promise<T>;
  /** `request` with method POST. */
  post<T = unknown>(path: string, options?: MethodOptions<T>): Promise<T>;
  /** `request` with method PUT. */
  put<T = unknown>(path: string, options?: MethodOptions<T>): Promise<T>;
  /** `request` with method PATCH. */
  patch<T = unknown>(path: string, options?: MethodOptions<T>): Promise<T>;
  /** `request` with method DELETE. */
  delete<T = unknown>(path: string, options?: MethodOptions<T>): Promise<T>;
  /** The token the next request would send; `{ forceRefresh: true }` asks the provider for a new one. */
  getToken(options?: { forceRefresh?: boolean }): Promise<string>;
  /** Forgets the held token (e.g. on logout); the next request asks the provider. */
  clearToken(): void;
  /** Subscribes to an event (see {@link ClientEvents}); `'*'` receives all. */
  on: Emitter<ClientEvents>['on'];
  /** Unsubscribes a handler added with `on`. */
  off: Emitter<ClientEvents>['off'];
}

/** What an entry supplies to the platform-neutral core. */
export interface Platform {
  transport: Transport;
  /** For the `signal` handed to tokenProvider; omitted where the host has no AbortController. */
  createAbortController?: TokenManagerOptions['createAbortController'];
}

/**
 * Builds a client over a transport. `entryKeys` names the options the entry consumed
 * itself (e.g. `fetch`), so that any other unknown key is reported.
 */
export function createCoreClient(options: CoreClientOptions, platform: Platform, entryKeys: string[]): Client {
  const config = resolveOptions(options, entryKeys);
  const { transport } = platform;
  const { now } = config;
  const events = createEvents();

  const tokens = createTokenManager({
    provider: config.tokenProvider,
    tokenTimeout: config.tokenTimeout,
    refreshLeeway: config.refreshLeeway,
    now,
    createAbortController: platform.createAbortController,
    onToken: (reason, held) =>
      events.emit('token', { reason, version: held.version, expiresAt: held.expiresAt < Infinity ? held.expiresAt : undefined }),
    onError: (reason, error) => events.emit('token:error', { reason, error }),
  });

  async function send(path: string, o: RequestOptions<unknown>): Promise<unknown> {
    const method = (o.method || 'GET').toUpperCase();
    const url = buildUrl(config.base, path, o.searchParams);
    const context = { method, url };
    const { signal, raw = false } = o;
    let headers = o.headers ? Object.assign({}, config.headers, normalizeHeaders(o.headers, 'headers')) : config.headers;
    let body = o.body;
    if (body !== undefined && typeof body !== 'string') throw new ConfigError('body must be a string; pass objects as json: value');
    if (o.json !== undefined) {
      if (body !== undefined) throw new ConfigError('pass either json or body, not both');
      body = JSON.stringify(o.json);
      if (!headers['content-type']) headers = Object.assign({}, headers, { 'content-type': 'application/json' });
    }
    const timeout = o.timeout === undefined ? config.timeout : milliseconds('timeout', o.timeout);
    const policy = o.retry === undefined ? config.retry : retryPolicy(o.retry, config.retry);
    const retryable = policy.methods.indexOf(method) >= 0;

    let held = await token(tokens.get(), signal, context);
    let retries = 0;
    let replayed = false;
    let rejectedToken = '';
    let attempt = 0;
    const note = <K extends 'request' | 'response' | 'unauthorized' | 'retry'>(type: K, extra: Omit<ClientEvents[K], keyof RequestInfo>) =>
      // A retry is numbered as the attempt it announces.
      events.emit(type, Object.assign({ method, url, attempt: type === 'retry' ? attempt + 1 : attempt }, extra) as ClientEvents[K]);
    for (;;) {
      attempt++;
      if (signal && signal.aborted) throw abortError(signal, context);
      note('request', {});
      const startedAt = now();
      let response: TransportResponse | undefined;
      let failure: ChannelError | undefined;
      try {
        // A fresh request object per attempt: nothing consumed by an earlier attempt is reused.
        response = await transport({ method, url, headers: Object.assign({}, headers, { authorization: 'Bearer ' + held.token }), body, timeout, signal });
      } catch (error) {
        failure = transportError(error, signal, context);
      }
      let reason: 'network' | 'timeout' | 'status';
      let status: number | undefined;
      let wait: number | undefined;
      if (!response) {
        failure = failure as ChannelError;
        // Only a lost or late response is transient; an abort or a host's configuration error is not.
        if ((failure.code !== 'NETWORK_ERROR' && failure.code !== 'TIMEOUT') || !retryable || retries >= policy.limit) throw failure;
        reason = failure.code === 'TIMEOUT' ? 'timeout' : 'network';
      } else {
        status = response.status;
        note('response', { status, durationMs: now() - startedAt });
        if (status === 401) {
          note('unauthorized', { tokenVersion: held.version });
          if (replayed) {
            const error = new UnauthorizedError(
              'the service rejected the token again after a forced refresh (HTTP 401 on ' + method + ' ' + url + '); ' +
                (held.token === rejectedToken
                  ? 'tokenProvider returned the same token for forceRefresh: true, so it must bypass its own cache then'
                  : 'the user needs to sign in again'),
              context,
            );
            events.emit('auth:failed', { method, url, error });
            throw error;
          }
          replayed = true;
          rejectedToken = held.token;
          held = await token(tokens.afterUnauthorized(held.version), signal, context);
          note('retry', { reason: 'unauthorized', delayMs: 0 });
          continue;
        }
        const transient = retryable && retries < policy.limit && policy.statusCodes.indexOf(status) >= 0;
        if (transient) wait = retryAfterMs(response.headers.get('retry-after'), now());
        // A Retry-After beyond maxRetryAfter ends the retries: the error is returned at once.
        if (!transient || (wait !== undefined && wait > policy.maxRetryAfter)) {
          const value = readResponse(response, raw, context, held.token);
          return o.schema ? validate(o.schema, value, status, context) : value;
        }
        reason = 'status';
      }
      retries++;
      const delayMs = wait === undefined ? policy.delay(retries) : wait;
      note('retry', { reason, status, delayMs });
      await sleep(delayMs, signal, context);
    }
  }

  function request<T>(path: string, o: RequestOptions<T> = {}): Promise<T> {
    return (send(path, o as RequestOptions<unknown>) as Promise<T>).then(undefined, (error: unknown) => {
      if (isChannelError(error) && error.method) {
        events.emit('error', { method: error.method, url: error.url as string, error });
      }
      throw error;
    });
  }

  const withMethod =
    (method: string) =>
    <T>(path: string, o?: MethodOptions<T>): Promise<T> =>
      request<T>(path, Object.assign({}, o, { method }));

  return {
    request,
    get: withMethod('GET'),
    post: withMethod('POST'),
    put: withMethod('PUT'),
    patch: withMethod('PATCH'),
    delete: withMethod('DELETE'),
    getToken: async (o) => (await (o && o.forceRefresh ? tokens.refresh('manual') : tokens.get())).token,
    clearToken: tokens.clear,
    on: events.on,
    off: events.off,
  };
}

function token(held: HeldToken | Promise<HeldToken>, signal: SignalLike | undefined, context: { method: string; url: string }) {
  return 'then' in held ? raceSignal(held, signal, context) : held;
}

function transportError(error: unknown, signal: SignalLike | undefined, context: { method: string; url: string }): ChannelError {
  if (signal && signal.aborted) return abortError(signal, context);
  if (isChannelError(error)) return error;
  return new NetworkError('request failed before a response arrived (' + (error instanceof Error ? error.message : 'unknown error') + ')', Object.assign({
    cause: error,
  }, context));
}
