import { Stop } from '../../core/cancel.js';
import type { NativeCalls, NativeOptions } from '../../core/platform.js';
import type { ChannelError } from '../../errors/ChannelError.js';
import { describeValue, fail } from '../../shared/check.js';
import { isolated } from '../../shared/report.js';
import type { HostHeaders, HostResult } from './host-api.js';
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
}

// What hostRequest reads itself; every other key is a host option, checked against the host's list.
const own = ['url', 'method', 'data', 'header', 'headers', 'timeout', 'success', 'fail', 'complete'];

/** The mini-program entry's native call: `client.hostRequest(options)`, over the host transport and its queue. */
export const hostRequestCalls: NativeCalls = {
  read(input: unknown, signal: unknown): NativeOptions {
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
      signal,
      hostOptions,
    };
  },
  methods: (run) => ({
    hostRequest(options: HostRequestCall) {
      const stop = new Stop();
      const task = run(options, stop).then(
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
      // error) still lets complete run.
      if (success || failed || complete)
        task.then(
          (result) => {
            if (success) isolated(() => success(result));
            if (complete) isolated(() => complete(result));
          },
          (error: HostRequestError) => {
            if (failed) isolated(() => failed(error));
            if (complete) isolated(() => complete(error));
            if (!failed && !complete) throw error;
          },
        );
      return Object.assign(task, { abort: () => stop.cancel() });
    },
  }),
};
