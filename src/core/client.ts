import type { Emitter } from 'mitt';
import { isChannelError } from '../errors/ChannelError.js';
import { AbortError } from '../errors/AbortError.js';
import { ConfigError } from '../errors/ConfigError.js';
import { Stop } from './cancel.js';
import { messageOf } from '../shared/message.js';
import { readResponse } from './requests/read-response.js';
import { createEvents, type ClientEvents } from './events.js';
import { resolveOptions } from './options.js';
import { createRedactor } from './redactor.js';
import { onAbort } from '../shared/signal.js';
import { withoutUserinfo } from '../shared/url.js';
import { abortError, cleared, raceRequest } from './requests/request-abort.js';
import { createTokenManager } from './token-lifecycle/token-manager.js';
import { createAppState } from './app-life/app-state.js';
import { createPacing } from './app-life/pacing.js';
import { createRetryBudget } from './requests/retry-budget.js';
import type { CallKind, Platform } from './platform.js';
import type { CoreClientOptions, FileCallOptions, MethodOptions, RequestOptions, SignalLike, TransportResponse, UploadFields } from './types.js';
import { createAttempts } from './requests/attempts.js';
import { createCallPreparer } from './requests/call-options.js';
import type { Call } from './requests/call.js';
import { createGetDedupe, dedupeKeyOf } from './requests/dedupe-gets.js';

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

const noop = () => {};

/**
 * Builds a client over a transport. `entryKeys` names the options the entry consumed
 * itself (e.g. `fetch`), so that any other unknown key is reported.
 */
export function createCoreClient(options: CoreClientOptions, platform: Platform, entryKeys: string[]): Client {
  const config = resolveOptions(options, entryKeys);
  const { now } = config;
  const events = createEvents();
  const redact = createRedactor();
  // Every request under way: clearToken() fences them all.
  const live = new Set<Stop>();
  // The caller's signals (a Request's own) of the calls the fence ended: a call given one again is a
  // stack's retry of a fenced call (ofetch with `timeout`, TanStack Query's `retry`), never sent.
  const fenced = new WeakSet<SignalLike>();
  const refuse = (given: SignalLike) => void fenced.add(given);
  let requests = 0;
  function fence(): void {
    live.forEach((stop) => stop.cancel(cleared));
    live.clear();
    // The bodies still arriving too: their calls' signals are fenced as those of the calls under way.
    if (platform.fence) platform.fence(refuse);
  }

  const telemetry = config.telemetry && config.telemetry.attach({ redact: redact.text, scope: platform.scope });
  const tokens = createTokenManager({
    telemetry,
    provider: config.tokenProvider,
    tokenTimeout: config.tokenTimeout,
    refreshLeeway: config.refreshLeeway,
    now,
    createAbortController: platform.createAbortController,
    redact,
    store: config.tokenStore,
    service: config.base,
    share: platform.share && platform.share(config),
    onRemoteClear: fence,
    onToken: (reason, held) => {
      redact.remember(held.token);
      events.emit('token', { reason, version: held.version, expiresAt: held.expiresAt < Infinity ? held.expiresAt : undefined });
    },
    onError: (reason, error) => events.emit('token:error', { reason, error }),
  });
  const prepare = createCallPreparer(config, platform);
  // The app's life and the network (followed from the first use on), and the retry budget.
  const pacing = createPacing({
    // offline: false: the network is not followed (a report known to be wrong).
    app: createAppState({
      visibility: platform.visibility,
      network: options.offline === false ? undefined : platform.network,
      events,
      warm: () => tokens.warm(),
    }),
    budget: createRetryBudget(config.retryBudget),
    events,
    now,
  });
  // Every call goes through the dedupe's `attempts`: a write ends the sharing of the GETs under way.
  const { attempts, dedupeGet } = createGetDedupe(createAttempts({ now, tokens, events, redact, beforeSend: config.beforeSend, telemetry, pacing }), live);

  /** The value a final response resolves to, or the error it rejects with. */
  function settle(call: Call, response: TransportResponse): unknown {
    const { status } = response;
    // A native call resolves to the transport's own result (a Response, the host's object) whatever its status.
    if (call.kind === 'native' || (response.value !== undefined && status >= 200 && status < 300)) return response.value;
    return readResponse({ response, call, redact });
  }

  /**
   * A call of request(), upload(), download() or a native one: checked, sent through the attempt
   * loop (or joined to an identical GET), settled. `helper` is the method of get(), post()...;
   * their options may not name another. A native call's `path` and `o` are its two arguments.
   * Async as a whole: whatever goes wrong in it, even a bad option, arrives as a rejection.
   */
  async function run<T>(path: string, o: object | undefined, kind: CallKind, helper?: string): Promise<T> {
    const requestId = ++requests;
    pacing.start();
    // A user switch noticed here ends the requests of the previous user, not this one.
    tokens.sync();
    const stop = new Stop();
    live.add(stop);
    const callOptions = (o === undefined && kind !== 'upload' && kind !== 'native' ? {} : o) as Record<string, unknown>;
    let detach = noop;
    let given: SignalLike | undefined;
    try {
      // Everything is checked before a token is asked for or anything is sent.
      let call = prepare({ kind, helper, path, options: callOptions, requestId, stop });
      given = call.given;
      if (given && fenced.has(given))
        throw new AbortError('a retry of a call that clearToken() ended (its signal again) is not sent; give each new call its own signal', call.context);
      // The request's own signal fires for the caller's signal and for clearToken().
      if (given) detach = given.aborted ? (stop.cancel(given.reason), noop) : onAbort(given, () => stop.cancel((given as SignalLike).reason));
      if (stop.aborted) throw abortError(stop, call.context);
      // A native call's body still being read (a stream, a Request's): kept whole, so the replay can send it again.
      const body = call.body as { then?: unknown } | undefined;
      if (body && typeof body.then === 'function') call = Object.assign({}, call, { body: await raceRequest(body as Promise<unknown>, stop, call.context) });
      const key = call.kind === 'request' && call.method === 'GET' && config.dedupeGets ? dedupeKeyOf(call, callOptions) : undefined;
      const response = key === undefined ? await attempts(call) : await dedupeGet(key, call);
      // Awaited only when the schema validates asynchronously: each await delays the result. A
      // fence or the caller's signal while it runs (or in a listener of the last response, or in
      // the schema itself) still ends the call: nothing it read is handed out after a clear.
      const settled = settle(call, response) as Promise<unknown> | undefined;
      const value = settled && typeof settled.then === 'function' ? await raceRequest(settled, stop, call.context) : settled;
      if (stop.aborted) throw abortError(stop, call.context);
      if (call.progress) call.progress.end();
      return value as T;
    } catch (thrown) {
      // Every failure is a ChannelError and emits `error`, whatever went wrong.
      const error = isChannelError(thrown) ? thrown : new ConfigError('unexpected failure: ' + redact.text(messageOf(thrown)), { cause: redact.cause(thrown) });
      if (events.heard('error')) {
        const method =
          error.method ||
          String(helper || (kind === 'upload' ? 'POST' : kind === 'download' ? 'GET' : (o && (o as { method?: unknown }).method) || 'GET')).toUpperCase();
        // A refused URL as the caller gave it (a Request's or hostRequest's `url`), without its userinfo.
        const url = error.url || withoutUserinfo(String(Object(path).url || path));
        events.emit('error', { requestId, method, url, error });
      }
      throw error;
    } finally {
      detach();
      live.delete(stop);
      if (given && stop.reason === cleared) fenced.add(given);
    }
  }

  const withMethod =
    (method: string) =>
    <T>(path: string, o?: MethodOptions<T>): Promise<T> =>
      run<T>(path, o, 'request', method);

  const client: Client = {
    request: (path, o) => run(path, o, 'request'),
    upload: (path, o) => run(path, o, 'upload'),
    download: (path, o) => run(path, o, 'download'),
    get: withMethod('GET'),
    post: withMethod('POST'),
    put: withMethod('PUT'),
    patch: withMethod('PATCH'),
    delete: withMethod('DELETE'),
    getToken: async (o) => {
      pacing.start();
      return (await (o && o.forceRefresh ? tokens.refresh('manual') : tokens.get())).token;
    },
    clearToken() {
      tokens.clear();
      fence();
    },
    on: events.on,
    off: events.off,
  };
  // The entry's own call shaped as its stack's function: client.fetch, client.hostRequest.
  return platform.native
    ? Object.assign(
        client,
        platform.native.methods((input, init) => run(input as string, init as object | undefined, 'native')),
      )
    : client;
}
