import type { Emitter } from 'mitt';
import { ChannelError, isChannelError } from '../errors/ChannelError.js';
import { ConfigError } from '../errors/ConfigError.js';
import { NetworkError } from '../errors/NetworkError.js';
import { UnauthorizedError } from '../errors/UnauthorizedError.js';
import { Stop } from './cancel.js';
import { checkKeys, describe, fail, messageOf } from './check.js';
import { readResponse, validate } from './envelope.js';
import { createEvents, type ClientEvents, type RequestInfo } from './events.js';
import { milliseconds, normalizeHeaders, resolveOptions } from './options.js';
import { createRedactor, type Redactor } from './redact.js';
import { delayOf, retryAfterMs, retryPolicy } from './retry.js';
import { abortError, cleared, onAbort, raceSignal, sleep } from './signal.js';
import { createTokenManager, type HeldToken, type TokenManagerOptions, type TokenShare } from './token-manager.js';
import type { CoreClientOptions, MethodOptions, RequestOptions, SignalLike, Transport, TransportResponse } from './types.js';
import { buildUrl } from './url.js';

/** A channel-sdk client. Create one per service base URL and keep it. */
export interface Client {
  /**
   * Sends a request with `Authorization: Bearer <token>` and resolves to the envelope's `data`.
   * @example
   * const order = await client.request<Order>('/open/api/v1/sdk/orders/SO20240601001', { method: 'GET' });
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
  /**
   * Forgets the held token (e.g. on logout). Requests already under way fail at once with
   * `AbortError` and are never sent again; the next request asks the provider.
   */
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
  /** Shares the token with other clients (the browser entry's crossTab), given the checked options. */
  share?: (config: { base: string; tokenTimeout: number }) => TokenShare | undefined;
}

const requestKeys = ['method', 'headers', 'searchParams', 'json', 'body', 'schema', 'raw', 'signal', 'timeout', 'retry'];
// Habits from axios, fetch and got, so that a wrong key is a ConfigError that names the right one.
const requestHints = { data: 'json', params: 'searchParams', query: 'searchParams', qs: 'searchParams', cancelToken: 'signal', timeoutms: 'timeout' };
const methodName = /^[A-Za-z]+$/;
const noop = () => {};

/**
 * Builds a client over a transport. `entryKeys` names the options the entry consumed
 * itself (e.g. `fetch`), so that any other unknown key is reported.
 */
export function createCoreClient(options: CoreClientOptions, platform: Platform, entryKeys: string[]): Client {
  const config = resolveOptions(options, entryKeys);
  const { transport } = platform;
  const { now } = config;
  const events = createEvents();
  const redact = createRedactor();
  // Every request under way: clearToken() fences them all.
  const live = new Set<Stop>();
  let requests = 0;
  function fence(): void {
    live.forEach((stop) => stop.cancel(cleared));
    live.clear();
  }

  const tokens = createTokenManager({
    provider: config.tokenProvider,
    tokenTimeout: config.tokenTimeout,
    refreshLeeway: config.refreshLeeway,
    now,
    createAbortController: platform.createAbortController,
    redact,
    store: config.tokenStore,
    share: platform.share && platform.share(config),
    onRemoteClear: fence,
    onToken: (reason, held) => {
      redact.remember(held.token);
      events.emit('token', { reason, version: held.version, expiresAt: held.expiresAt < Infinity ? held.expiresAt : undefined });
    },
    onError: (reason, error) => events.emit('token:error', { reason, error }),
  });

  async function send(path: string, o: RequestOptions<unknown>, requestId: number, stop: Stop, helper?: string): Promise<unknown> {
    // Everything is checked before a token is asked for or anything is sent.
    if (typeof o !== 'object' || o === null) fail('request options must be an object, e.g. { searchParams, json }; got ' + describe(o));
    checkKeys(o, requestKeys, 'request option', requestHints);
    if (helper && o.method !== undefined) fail('method is set by ' + helper.toLowerCase() + '(); use request(path, { method }) for another');
    const method = helper || (o.method === undefined ? 'GET' : typeof o.method === 'string' && methodName.test(o.method) ? o.method.toUpperCase() : fail('method must be an HTTP method name such as "PUT"; got ' + describe(o.method)));
    const url = buildUrl(config.base, path, o.searchParams);
    const context = { method, url };
    const { raw = false, schema } = o;
    let headers = o.headers ? Object.assign({}, config.headers, normalizeHeaders(o.headers, 'headers')) : config.headers;
    let body = o.body;
    if (body !== undefined && typeof body !== 'string') fail('body must be a string; pass objects as json: value');
    if (o.json !== undefined) {
      if (body !== undefined) fail('pass either json or body, not both');
      try {
        body = JSON.stringify(o.json);
      } catch (error) {
        fail('json could not be serialised (' + messageOf(error) + '); pass plain JSON data');
      }
      if (body === undefined) fail('json must be JSON data; got ' + describe(o.json));
      if (!headers['content-type']) headers = Object.assign({}, headers, { 'content-type': 'application/json' });
    }
    if (body !== undefined && (method === 'GET' || method === 'HEAD')) fail(method + ' requests have no body; send values in searchParams, or use POST');
    if (typeof raw !== 'boolean') fail('raw must be true or false; got ' + describe(raw));
    if (schema !== undefined && !(schema && schema['~standard'] && typeof schema['~standard'].validate === 'function')) {
      fail('schema must be a Standard Schema (zod 4, valibot, arktype...); got ' + describe(schema));
    }
    const given = o.signal;
    if (given !== undefined && !(given && typeof given.addEventListener === 'function' && typeof given.aborted === 'boolean')) {
      fail('signal must be an AbortSignal or createCancelToken().signal; got ' + describe(given));
    }
    const timeout = o.timeout === undefined ? config.timeout : milliseconds('timeout', o.timeout);
    const policy = o.retry === undefined ? config.retry : retryPolicy(o.retry, config.retry);
    const retryable = policy.methods.indexOf(method) >= 0;

    // The request's own signal fires for the caller's signal and for clearToken().
    const signal = stop;
    const detach = !given ? noop : given.aborted ? (stop.cancel(given.reason), noop) : onAbort(given, () => stop.cancel(given.reason));
    try {
      if (signal.aborted) throw abortError(signal, context);
      let held = await token(tokens.get(), signal, context);
      let retries = 0;
      let replayed = false;
      let rejectedToken = '';
      let attempt = 0;
      const note = <K extends 'request' | 'response' | 'unauthorized' | 'retry'>(type: K, extra: Omit<ClientEvents[K], keyof RequestInfo>) => {
        // A retry is numbered as the attempt it announces. No payload is built for nobody.
        if (events.heard(type)) events.emit(type, Object.assign({ requestId, method, url, attempt: type === 'retry' ? attempt + 1 : attempt }, extra) as ClientEvents[K]);
      };
      for (;;) {
        attempt++;
        note('request', {});
        // Another user since the token was taken ends this request (it fences it).
        tokens.sync();
        // After the event: a listener may have called clearToken() or aborted.
        if (signal.aborted) throw abortError(signal, context);
        const startedAt = now();
        let response: TransportResponse | undefined;
        let failure: ChannelError | undefined;
        try {
          // A fresh request object per attempt: nothing consumed by an earlier attempt is reused.
          // The transport drops the connection on the caller's signal; for a clearToken() fence
          // it only must not start a queued attempt, and the request ends here at once.
          const sent = transport({ method, url, headers: Object.assign({}, headers, { authorization: 'Bearer ' + held.token }), body, timeout, signal, dropOnAbort: !!given });
          response = await (given ? sent : raceSignal(sent, signal, context, false));
        } catch (error) {
          failure = transportError(error, signal, context, redact);
        }
        if (response) tokens.observe(response.headers.get('date'), startedAt, now());
        tokens.sync();
        // Whatever the transport did, a cancelled request is not resolved, replayed or retried.
        if (signal.aborted) throw failure && failure.code === 'ABORTED' ? failure : abortError(signal, context);
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
              events.emit('auth:failed', { requestId, method, url, error });
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
            const value = readResponse(response, raw, context, redact);
            return schema ? validate(schema, value, status, context) : value;
          }
          reason = 'status';
        }
        retries++;
        const delayMs = wait === undefined ? delayOf(policy, retries) : wait;
        note('retry', { reason, status, delayMs });
        await sleep(delayMs, signal, context);
      }
    } finally {
      detach();
    }
  }

  /** `helper` is the method of get(), post()...; their options may not name another. */
  function run<T>(path: string, o: RequestOptions<T> = {}, helper?: string): Promise<T> {
    const requestId = ++requests;
    // A user switch noticed here ends the requests of the previous user, not this one.
    tokens.sync();
    const stop = new Stop();
    live.add(stop);
    // send() is async: whatever goes wrong in it, even a bad option, arrives as a rejection.
    return send(path, o as RequestOptions<unknown>, requestId, stop, helper).then(
      (value) => {
        live.delete(stop);
        return value as T;
      },
      (thrown: unknown) => {
        live.delete(stop);
        // Every failure is a ChannelError and emits `error`, whatever went wrong.
        const error = isChannelError(thrown) ? thrown : new ConfigError('unexpected failure: ' + redact.text(messageOf(thrown)), { cause: redact.cause(thrown) });
        if (events.heard('error')) {
          const method = error.method || String(helper || (o && o.method) || 'GET').toUpperCase();
          events.emit('error', { requestId, method, url: error.url || String(path), error });
        }
        throw error;
      },
    );
  }

  const withMethod =
    (method: string) =>
    <T>(path: string, o?: MethodOptions<T>): Promise<T> =>
      run<T>(path, o, method);

  return {
    request: (path, o) => run(path, o),
    get: withMethod('GET'),
    post: withMethod('POST'),
    put: withMethod('PUT'),
    patch: withMethod('PATCH'),
    delete: withMethod('DELETE'),
    getToken: async (o) => (await (o && o.forceRefresh ? tokens.refresh('manual') : tokens.get())).token,
    clearToken() {
      tokens.clear();
      fence();
    },
    on: events.on,
    off: events.off,
  };
}

function token(held: HeldToken | Promise<HeldToken>, signal: SignalLike, context: { method: string; url: string }) {
  return 'then' in held ? raceSignal(held, signal, context, false) : held;
}

function transportError(error: unknown, signal: SignalLike, context: { method: string; url: string }, redact: Redactor): ChannelError {
  // The transport's own AbortError for our signal is the one to keep: one error per
  // cancelled request (10,000 requests cancelled at once build 10,000 stacks, not 30,000).
  if (signal.aborted) return isChannelError(error) && error.code === 'ABORTED' && error.url === context.url ? error : abortError(signal, context);
  if (isChannelError(error)) return error;
  return new NetworkError('request failed before a response arrived (' + redact.text(error instanceof Error ? error.message : 'unknown error') + ')', Object.assign({
    cause: redact.cause(error),
  }, context));
}
