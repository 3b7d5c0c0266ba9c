import { Stop } from '../../core/cancel.js';
import type { NativeOptions, NativeShape } from '../../core/platform.js';
import type { ChannelError } from '../../errors/ChannelError.js';
import { describeValue, fail } from '../../shared/check.js';
import { isolated } from '../../shared/report.js';
import type { HostHeaders, HostResult, HostTask } from './host-api.js';
import { statusOf } from './host-response.js';

// Mini-program code, as host-transport.ts: ES2015 built-ins only.

/** What `client.hostRequest` takes: the options of `wx.request` (and of uni.request, Taro.request). */
export interface HostRequestCall<T = unknown> {
  /** A path, or a full URL under baseUrl; anything else is refused and nothing is sent. */
  url: string;
  /** @default 'GET' */
  method?: string;
  /** Sent as the host sends it: an object as JSON (or as the query of a GET), a string, an ArrayBuffer. Sent again by the replay. */
  data?: unknown;
  /** Request headers; `Authorization` is the SDK's own and may not be set. */
  header?: Record<string, string>;
  /** Alipay's name for `header`. */
  headers?: Record<string, string>;
  /** Milliseconds per attempt. @default the client's `timeout` */
  timeout?: number;
  /** How the host reads the body: `'json'` (the host's default) parses it. */
  dataType?: string;
  /** `'text'` or `'arraybuffer'`. */
  responseType?: string;
  /** The answer, whatever its HTTP status (4xx and 5xx too, as wx.request gives them). */
  success?: (result: HostRequestResult<T>) => void;
  /** No answer: a network failure, a timeout, `abort()`, clearToken(), a tokenProvider failure or a refused option. */
  fail?: (error: HostRequestError) => void;
  /** After `success` or `fail`, with what it received. */
  complete?: (outcome: HostRequestResult<T> | HostRequestError) => void;
  /** The host's other request options (enableHttp2, enableCache...), checked against its list. */
  [hostOption: string]: unknown;
}

/** What `success` receives: the host's own result, with `statusCode` and `header` on every host (Alipay's `status` and `headers` too). */
export interface HostRequestResult<T = unknown> {
  /** The body, as the host parsed it for `dataType` / `responseType`. */
  data: T;
  statusCode: number;
  header: HostHeaders;
  [field: string]: unknown;
}

/** What `fail` receives: the SDK's error, with a host's `errMsg` ("request:fail abort", "request:fail timeout"...). */
export type HostRequestError = ChannelError & { errMsg: string };

/** What `client.hostRequest` returns: a task with `abort()`, and also a promise of the result (as Taro's and uni's without callbacks). */
export interface HostRequestTask<T = unknown> extends Promise<HostRequestResult<T>> {
  /** Stops the request wherever it is (waiting for a token, queued, on the wire): `fail` gets "request:fail abort". */
  abort(): void;
  /**
   * The answer's headers as they arrive, before `success` (where the host's task has this event:
   * WeChat from base library 2.1.0, `statusCode` on devices). Not a 401's, which the SDK replays.
   */
  onHeadersReceived(listener: (result: { header: HostHeaders; statusCode?: number; [field: string]: unknown }) => void): void;
  /** Removes a listener of onHeadersReceived, or all of them. */
  offHeadersReceived(listener?: (result: never) => void): void;
  /**
   * With `enableChunked: true`: each chunk of the answer's body as it arrives (where the host's task
   * has this event: WeChat from 2.20.1). Never a replayed 401's, nothing after abort() or clearToken().
   */
  onChunkReceived(listener: (result: { data: ArrayBuffer; [field: string]: unknown }) => void): void;
  /** Removes a listener of onChunkReceived, or all of them. */
  offChunkReceived(listener?: (result: never) => void): void;
}

/** The caller's listeners of the task's events (headers, chunks), and how each attempt's host task is tied to them. */
function taskEvents() {
  type Listener = (result: HostResult & { data?: unknown }) => void;
  const headers: Listener[] = [];
  const chunks: Listener[] = [];
  const emit = (list: Listener[], result: HostResult) => list.slice().forEach((f) => isolated(() => f(result)));
  const on = (list: Listener[]) => (f: Listener) => void list.push(f);
  const off = (list: Listener[]) => (f?: Listener) => void list.splice(0, list.length, ...list.filter((g) => f && g !== f));
  return {
    methods: {
      onHeadersReceived: on(headers),
      offHeadersReceived: off(headers),
      onChunkReceived: on(chunks),
      offChunkReceived: off(chunks),
    },
    /**
     * Called by the transport with each attempt's host task: its events reach the caller while the
     * attempt is `live` (not settled, aborted or fenced); a 401's are the SDK's, which replays it.
     */
    attach(task: HostTask, live: () => boolean): void {
      let heard = true;
      if (typeof task.onHeadersReceived === 'function')
        task.onHeadersReceived((result) => {
          heard = !(result && statusOf(result) === 401);
          if (heard && live()) emit(headers, result);
        });
      if (typeof task.onChunkReceived === 'function') task.onChunkReceived((result) => heard && live() && emit(chunks, result));
    },
  };
}

// What hostRequest reads itself; every other key is a host option, checked against the host's list.
const own = ['url', 'method', 'data', 'header', 'headers', 'timeout', 'success', 'fail', 'complete'];

/** The mini-program entry's native call: `client.hostRequest(options)`, over the host transport and its queue. */
export const hostRequestCalls: NativeShape = {
  read(input: unknown, extra: unknown): NativeOptions {
    if (typeof input !== 'object' || input === null)
      fail('hostRequest takes the options of wx.request, e.g. { url, method, data, success, fail }; got ' + describeValue(input));
    const o = input as Record<string, unknown>;
    let hostOptions: Record<string, unknown> | undefined;
    // Keys left undefined (luch-request and others spread optional ones) are as good as absent.
    for (const key in o) if (own.indexOf(key) < 0 && o[key] !== undefined) (hostOptions || (hostOptions = {}))[key] = o[key];
    for (const name of ['success', 'fail', 'complete'])
      if (o[name] !== undefined && typeof o[name] !== 'function') fail('hostRequest: ' + name + ' must be a function; got ' + describeValue(o[name]));
    return {
      url: o.url as string,
      method: o.method,
      headers: (o.header !== undefined ? o.header : o.headers) as Record<string, unknown> | undefined,
      body: o.data,
      timeout: o.timeout,
      // The task's own: its abort(), and its events' listeners, which the transport ties to each attempt's host task.
      signal: (extra as { signal: unknown }).signal,
      passOn: (extra as { passOn: Record<string, unknown> }).passOn,
      hostOptions,
    };
  },
  methods: (run) => ({
    hostRequest(options: HostRequestCall) {
      const stop = new Stop();
      const events = taskEvents();
      const task = run(options, { signal: stop, passOn: { attach: events.attach } }).then(
        (result) => {
          const r = result as HostResult;
          return Object.assign({}, r, { statusCode: statusOf(r), header: r.header || r.headers }) as HostRequestResult;
        },
        (error: HostRequestError) => {
          const code = error.code;
          if (!error.errMsg) error.errMsg = 'request:fail ' + (code === 'ABORTED' ? 'abort' : code === 'TIMEOUT' ? 'timeout' : error.message);
          throw error;
        },
      );
      const o = (options || {}) as HostRequestCall;
      const fn = <F>(f: F) => (typeof f === 'function' ? f : undefined);
      const success = fn(o.success);
      const failed = fn(o.fail);
      const complete = fn(o.complete);
      // With callbacks the promise is handled here (no unhandled rejection); without, the caller
      // awaits it. Each callback on its own, as the host runs them: one that throws (an uncaught
      // error) still lets complete run. With success alone, a failure is the returned promise's:
      // the caller's who awaits it (as Taro's request), an unhandled rejection if nobody does.
      if (success || failed || complete)
        task.then(
          (result) => {
            if (success) isolated(() => success(result));
            if (complete) isolated(() => complete(result));
          },
          (error: HostRequestError) => {
            if (failed) isolated(() => failed(error));
            if (complete) isolated(() => complete(error));
          },
        );
      return Object.assign(success && !failed && !complete ? task.then() : task, { abort: () => stop.cancel() }, events.methods);
    },
  }),
};
