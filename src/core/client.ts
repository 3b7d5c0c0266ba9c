import type { Emitter } from 'mitt';
import { ChannelError, isChannelError } from '../errors/ChannelError.js';
import { ConfigError } from '../errors/ConfigError.js';
import { NetworkError } from '../errors/NetworkError.js';
import { UnauthorizedError } from '../errors/UnauthorizedError.js';
import { Stop } from './cancel.js';
import { checkKeys, describe, fail, optionalString } from '../shared/check.js';
import { messageOf } from '../shared/message.js';
import { onAbort } from '../shared/signal.js';
import { readResponse, validate } from './envelope.js';
import { createEvents, type ClientEvents, type RequestInfo } from './events.js';
import type { StandardSchemaV1 } from './standard-schema.js';
import { milliseconds, normalizeHeaders, resolveOptions } from './options.js';
import { createRedactor, type Redactor } from './redact.js';
import { delayOf, retryAfterMs, retryPolicy, type RetryPolicy } from './retry.js';
import { abortError, cleared, raceRequest, sleepRequest } from './signal.js';
import { createTokenManager, type HeldToken, type TokenManagerOptions, type TokenShare } from './token-manager.js';
import type { CoreClientOptions, FileCallOptions, FileSpec, MethodOptions, Progress, RequestOptions, SignalLike, Transport, TransportResponse, UploadFields, UploadSpec } from './types.js';
import { buildUrl } from './url.js';

/** What every client has, on both entries; `X` is what an entry adds to the request options. */
export interface BaseClient<X = {}> {
  /**
   * Sends a request with `Authorization: Bearer <token>` and resolves to the envelope's `data`.
   * @example
   * const order = await client.request<Order>('/open/api/v1/sdk/orders/SO20240601001', { method: 'GET' });
   */
  request<T = unknown>(path: string, options?: RequestOptions<T> & X): Promise<T>;
  /** `request` with method GET. */
  get<T = unknown>(path: string, options?: MethodOptions<T> & X): Promise<T>;
  /** `request` with method POST. */
  post<T = unknown>(path: string, options?: MethodOptions<T> & X): Promise<T>;
  /** `request` with method PUT. */
  put<T = unknown>(path: string, options?: MethodOptions<T> & X): Promise<T>;
  /** `request` with method PATCH. */
  patch<T = unknown>(path: string, options?: MethodOptions<T> & X): Promise<T>;
  /** `request` with method DELETE. */
  delete<T = unknown>(path: string, options?: MethodOptions<T> & X): Promise<T>;
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

/**
 * A client as the core builds it. Each entry exports its own `Client` with the precise types
 * of its file calls (a host file path and `{ tempFilePath }`, or a Blob).
 */
export interface Client extends BaseClient<{ hostOptions?: Record<string, unknown> }> {
  /** Sends a file as multipart with the token; resolves to the envelope's `data`. */
  upload<T = unknown>(path: string, options: UploadFields<T>): Promise<T>;
  /** Fetches a file with the token; never resolves to a 401 or 5xx body. */
  download(path: string, options?: FileCallOptions): Promise<unknown>;
}

/** What a call is: `request()` and its helpers, `upload()` or `download()`. */
export type CallKind = 'request' | 'upload' | 'download';

/** What an entry supplies to the platform-neutral core. */
export interface Platform {
  transport: Transport;
  /** For the `signal` handed to tokenProvider; omitted where the host has no AbortController. */
  createAbortController?: TokenManagerOptions['createAbortController'];
  /** Shares the token with other clients (the browser entry's crossTab), given the checked options. */
  share?: (config: { base: string; tokenTimeout: number }) => TokenShare | undefined;
  /** How an upload names its file: a host file path (mini-programs) or a Blob (browsers). */
  files: FileSource;
  /**
   * Checks a call's `hostOptions` against the host's list for that kind of call and merges the
   * client's own; absent where there are none (the option is then unknown).
   */
  hostOptions?: (kind: CallKind, value: unknown) => Record<string, unknown> | undefined;
}

/** An entry's way of naming an upload's file, and the options that adds to upload and download. */
export interface FileSource {
  /** Option names upload (then download) takes besides the shared ones, e.g. `['filePath']`. */
  upload: string[];
  download: string[];
  /** Other libraries' names for those options, for "did you mean" (keys lower-case). */
  hints: Record<string, string>;
  /** The file of an upload's options, checked (a ConfigError naming the fix otherwise). */
  take(o: Record<string, unknown>): Pick<UploadSpec, 'filePath' | 'blob' | 'fileName'>;
}

const requestKeys = ['method', 'headers', 'searchParams', 'json', 'body', 'schema', 'raw', 'signal', 'timeout', 'retry'];
// Habits from axios, fetch and got, so that a wrong key is a ConfigError that names the right one.
const requestHints = { data: 'json', params: 'searchParams', query: 'searchParams', qs: 'searchParams', canceltoken: 'signal', timeoutms: 'timeout' };
// Options every file call takes; upload and download add their own, and the entry its own (FileSource).
const fileKeys = ['headers', 'searchParams', 'signal', 'timeout', 'onProgress'];
// Those habits, and the hosts' uploadFile's and axios/ky's for files (near misses such as
// `header` and `progress` need none: checkKeys finds those by spelling).
const fileHints = Object.assign({}, requestHints, { onprogressupdate: 'onProgress', onuploadprogress: 'onProgress', ondownloadprogress: 'onProgress', data: 'formData' });
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

  /** Everything a call needs, checked: built once, before a token is asked for or anything is sent. */
  interface Call {
    kind: CallKind;
    method: string;
    url: string;
    context: { method: string; url: string };
    headers: Record<string, string>;
    body?: string;
    raw: boolean;
    schema?: StandardSchemaV1<unknown, unknown>;
    given?: SignalLike;
    timeout: number;
    policy: RetryPolicy;
    file?: FileSpec;
    onProgress?: (progress: Progress) => void;
    hostOptions?: Record<string, unknown>;
  }

  const { files } = platform;
  const withHost = platform.hostOptions ? ['hostOptions'] : [];
  const keys = {
    request: requestKeys.concat(withHost),
    upload: fileKeys.concat(['name', 'formData', 'schema', 'raw'], files.upload, withHost),
    download: fileKeys.concat(files.download, withHost),
  };
  const hints = { request: requestHints, upload: Object.assign({}, fileHints, files.hints), download: Object.assign({}, fileHints, files.hints) };

  function prepare(path: string, o: Record<string, unknown>, kind: CallKind, helper?: string): Call {
    if (typeof o !== 'object' || o === null) fail(kind + ' options must be an object, e.g. { ' + (kind === 'request' ? 'searchParams, json' : files.upload[0] + ', name') + ' }; got ' + describe(o));
    checkKeys(o, keys[kind], kind + ' option', hints[kind]);
    const own = o.headers ? normalizeHeaders(o.headers, 'headers') : undefined;
    let headers = own ? Object.assign({}, config.headers, own) : config.headers;
    let method: string;
    let body: string | undefined;
    let file: FileSpec | undefined;
    if (kind === 'request') {
      if (helper && o.method !== undefined) fail('method is set by ' + helper.toLowerCase() + '(); use request(path, { method }) for another');
      method = helper || (o.method === undefined ? 'GET' : typeof o.method === 'string' && methodName.test(o.method) ? o.method.toUpperCase() : fail('method must be an HTTP method name such as "PUT"; got ' + describe(o.method)));
      body = o.body as string | undefined;
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
    } else {
      // The multipart boundary is the host's (or fetch's) to set. A download takes any type
      // unless the call names one: the client's accept is for the service's JSON.
      if (own && own['content-type']) fail('content-type is set by the ' + kind + ' itself; remove it from headers');
      headers = Object.assign({}, headers);
      delete headers['content-type'];
      if (kind === 'download') {
        if (!(own && own.accept)) headers.accept = '*/*';
        method = 'GET';
        file = { kind, filePath: optionalString(o, 'filePath') };
      } else {
        method = 'POST';
        file = uploadSpec(o);
      }
    }
    const url = buildUrl(config.base, path, o.searchParams as RequestOptions['searchParams']);
    const { raw = false, schema } = o as { raw?: unknown; schema?: StandardSchemaV1<unknown, unknown> };
    if (typeof raw !== 'boolean') fail('raw must be true or false; got ' + describe(raw));
    if (schema !== undefined && !(schema && schema['~standard'] && typeof schema['~standard'].validate === 'function')) {
      fail('schema must be a Standard Schema (zod 4, valibot, arktype...); got ' + describe(schema));
    }
    const given = o.signal as SignalLike | undefined;
    if (given !== undefined && !(given && typeof given.addEventListener === 'function' && typeof given.aborted === 'boolean')) {
      fail('signal must be an AbortSignal or createCancelToken().signal; got ' + describe(given));
    }
    const { onProgress } = o;
    if (onProgress !== undefined && typeof onProgress !== 'function') fail('onProgress must be a function ({ percent, transferredBytes, totalBytes }) => void; got ' + describe(onProgress));
    return {
      kind,
      method,
      url,
      context: { method, url },
      headers,
      body,
      raw,
      schema,
      given,
      timeout: o.timeout === undefined ? config.timeout : milliseconds('timeout', o.timeout),
      policy: o.retry === undefined ? config.retry : retryPolicy(o.retry as RequestOptions['retry'], config.retry),
      file,
      onProgress: onProgress as Call['onProgress'],
      hostOptions: platform.hostOptions && platform.hostOptions(kind, o.hostOptions),
    };
  }

  function uploadSpec(o: Record<string, unknown>): FileSpec {
    const name = o.name;
    if (!(typeof name === 'string' && name)) fail('name must be the multipart field name the server reads the file from, e.g. name: "file"; got ' + describe(name));
    const formData: Record<string, string> = {};
    const fields = o.formData;
    if (fields !== undefined) {
      if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) fail('formData must be an object of field names to strings; got ' + describe(fields));
      for (const key of Object.keys(fields)) {
        const value = (fields as Record<string, unknown>)[key];
        if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') fail('formData.' + key + ' must be a string, number or boolean; got ' + describe(value));
        formData[key] = String(value);
      }
    }
    return Object.assign({ kind: 'upload' as const, name, formData }, files.take(o));
  }

  /**
   * The attempts of one call: token, send, 401 -> one shared forced refresh -> one replay,
   * transient retries. Resolves to the final response (any status), for settle() to read.
   */
  async function attempts(call: Call, requestId: number, signal: Stop, drop: boolean, progress?: (p: Progress) => void): Promise<TransportResponse> {
    const { method, url, context, policy } = call;
    const retryable = policy.methods.indexOf(method) >= 0;
    // A token already held is used at once: an await here would let whatever else is queued run
    // before the host (or fetch) is even called, on every request.
    const first = token(tokens.get(), signal, context);
    let held = 'then' in first ? await first : first;
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
        const sent = transport({
          method,
          url,
          headers: Object.assign({}, call.headers, { authorization: 'Bearer ' + held.token }),
          body: call.body,
          timeout: call.timeout,
          signal,
          dropOnAbort: drop,
          file: call.file,
          onProgress: progress,
          hostOptions: call.hostOptions,
          raw: call.raw,
        });
        response = await (drop ? sent : raceRequest(sent, signal, context));
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
        if (!transient || (wait !== undefined && wait > policy.maxRetryAfter)) return response;
        reason = 'status';
      }
      retries++;
      const delayMs = wait === undefined ? delayOf(policy, retries) : wait;
      note('retry', { reason, status, delayMs });
      await sleepRequest(delayMs, signal, context);
    }
  }

  // Identical GETs in flight, when dedupeGets is on: one network call, any number of waiters.
  const shared = new Map<string, { users: number; stop: Stop; promise: Promise<TransportResponse> }>();

  function joinShared(key: string, call: Call, requestId: number, stop: Stop): Promise<TransportResponse> {
    let entry = shared.get(key);
    // A call whose every waiter left is being dropped: a newcomer starts a fresh one.
    if (!entry || entry.stop.aborted) {
      const own = new Stop();
      const fresh = (entry = { users: 0, stop: own, promise: attempts(call, requestId, own, true) });
      const done = () => {
        live.delete(own);
        if (shared.get(key) === fresh) shared.delete(key);
      };
      live.add(own);
      fresh.promise.then(done, done);
      shared.set(key, fresh);
    }
    const joined = entry;
    joined.users++;
    // The last waiter gone (its signal, or the fence): the call is dropped; until then it goes on.
    const leave = () => void (--joined.users === 0 && joined.stop.cancel(stop.reason));
    const waited = raceRequest(joined.promise, stop, call.context);
    waited.then(leave, leave);
    return waited;
  }

  function shareKey(call: Call, o: Record<string, unknown>): string | undefined {
    // A retry policy with its own delay function cannot be compared: such a GET goes alone.
    const retry = o.retry as { delay?: unknown } | undefined;
    if (retry && typeof retry.delay === 'function') return undefined;
    // oxlint-disable-next-line unicorn/no-array-sort -- a fresh array; toSorted is ES2023, which mini-programs lack
    const names = Object.keys(call.headers).sort();
    return JSON.stringify([call.url, names.map((n) => [n, call.headers[n]]), call.timeout, retry, call.hostOptions]);
  }

  /** The value a final response resolves to, or the error it rejects with. */
  function settle(call: Call, response: TransportResponse): unknown {
    const { status } = response;
    if (response.value !== undefined && status >= 200 && status < 300) return response.value;
    const value = readResponse(response, call.raw, call.context, redact);
    return call.schema ? validate(call.schema, value, status, call.context) : value;
  }

  async function send(path: string, o: Record<string, unknown>, kind: CallKind, requestId: number, stop: Stop, helper?: string): Promise<unknown> {
    // Everything is checked before a token is asked for or anything is sent.
    const call = prepare(path, o, kind, helper);
    const given = call.given;
    // The request's own signal fires for the caller's signal and for clearToken().
    const detach = !given ? noop : given.aborted ? (stop.cancel(given.reason), noop) : onAbort(given, () => stop.cancel(given.reason));
    try {
      if (stop.aborted) throw abortError(stop, call.context);
      const progress = call.onProgress && monotonic(call.onProgress, stop);
      const key = kind === 'request' && call.method === 'GET' && config.dedupeGets ? shareKey(call, o) : undefined;
      const response = key === undefined ? await attempts(call, requestId, stop, !!given || kind !== 'request', progress && progress.report) : await joinShared(key, call, requestId, stop);
      // Awaited only when the schema validates asynchronously: each await delays the result.
      const settled = settle(call, response) as { then?: unknown } | undefined;
      const value = settled && typeof settled.then === 'function' ? await settled : settled;
      if (progress) progress.end();
      return value;
    } finally {
      detach();
    }
  }

  /** `helper` is the method of get(), post()...; their options may not name another. */
  function run<T>(path: string, o: object | undefined, kind: CallKind, helper?: string): Promise<T> {
    const requestId = ++requests;
    // A user switch noticed here ends the requests of the previous user, not this one.
    tokens.sync();
    const stop = new Stop();
    live.add(stop);
    // send() is async: whatever goes wrong in it, even a bad option, arrives as a rejection.
    return send(path, (o === undefined && kind !== 'upload' ? {} : o) as Record<string, unknown>, kind, requestId, stop, helper).then(
      (value) => {
        live.delete(stop);
        return value as T;
      },
      (thrown: unknown) => {
        live.delete(stop);
        // Every failure is a ChannelError and emits `error`, whatever went wrong.
        const error = isChannelError(thrown) ? thrown : new ConfigError('unexpected failure: ' + redact.text(messageOf(thrown)), { cause: redact.cause(thrown) });
        if (events.heard('error')) {
          const method = error.method || String(helper || (kind === 'upload' ? 'POST' : kind === 'download' ? 'GET' : (o && (o as { method?: unknown }).method) || 'GET')).toUpperCase();
          events.emit('error', { requestId, method, url: error.url || String(path), error });
        }
        throw error;
      },
    );
  }

  const withMethod =
    (method: string) =>
    <T>(path: string, o?: MethodOptions<T>): Promise<T> =>
      run<T>(path, o, 'request', method);

  return {
    request: (path, o) => run(path, o, 'request'),
    upload: (path, o) => run(path, o, 'upload'),
    download: (path, o) => run(path, o, 'download'),
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
  return 'then' in held ? raceRequest(held, signal, context) : held;
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

/**
 * Progress as the caller sees it: percent clamped to 0..1 and never going back (a replay after
 * a 401 starts its transfer over, and the caller sees its value held until the replay passes
 * it), ended by exactly one 1 when the call resolves, and silent once the call is aborted. A
 * listener that throws surfaces as an uncaught error without failing the transfer, as event
 * listeners do.
 */
function monotonic(listener: (progress: Progress) => void, stop: SignalLike): { report(p: Progress): void; end(): void } {
  let shown = -1;
  let total = 0;
  const emit = (percent: number, transferredBytes: number, totalBytes: number) => {
    shown = percent;
    try {
      listener({ percent, transferredBytes, totalBytes });
    } catch (error) {
      setTimeout(() => {
        throw error;
      });
    }
  };
  return {
    report(p) {
      if (p.totalBytes > 0) total = p.totalBytes;
      const percent = Math.min(1, Math.max(0, p.percent || 0));
      if (percent > shown && !stop.aborted) emit(percent, p.transferredBytes, p.totalBytes > 0 ? p.totalBytes : 0);
    },
    end() {
      if (shown < 1) emit(1, total, total);
    },
  };
}
