import { AbortError } from '../errors/AbortError.js';
import { ConfigError } from '../errors/ConfigError.js';
import { NetworkError } from '../errors/NetworkError.js';
import { TimeoutError } from '../errors/TimeoutError.js';
import { abortError } from '../core/signal.js';
import type { SignalLike, Transport, TransportRequest, TransportResponse } from '../core/types.js';

// Written for the mini-program hosts: no fetch, Headers, AbortController, TextDecoder, URL,
// Object.entries or Promise.prototype.finally here (see README "Mini-program hosts").

/** The options object every host's `request()` accepts (WeChat and Alipay shapes together). */
export interface HostRequestOptions {
  url: string;
  method: string;
  /** WeChat family. */
  header: Record<string, string>;
  /** Alipay (older base libraries read only this one). */
  headers: Record<string, string>;
  data?: string;
  dataType: string;
  responseType: 'text';
  timeout: number;
  success(result: HostResult): void;
  fail(error: HostResult): void;
  complete?(result: HostResult): void;
}

/** What a host hands to `success` or `fail`; every field optional because hosts differ. */
export interface HostResult {
  statusCode?: number;
  status?: number;
  header?: HostHeaders;
  headers?: HostHeaders;
  data?: unknown;
  errMsg?: string;
  errno?: number;
  /** Alipay's numeric error. */
  error?: number;
  errorMessage?: string;
  /** Baidu's numeric error. */
  errCode?: number;
}

/** Response headers as hosts give them: any key case, DingTalk-style arrays of objects. */
export type HostHeaders = Record<string, unknown> | Array<Record<string, unknown>>;

/** A host's `request()`: returns a task with `abort()` (or a Promise carrying one, as Taro does). */
export type HostRequest = (options: HostRequestOptions) => unknown;

export interface MiniProgramTransportOptions {
  request: HostRequest;
  /** `dataType` that makes the host return raw text: `'string'` for tt/swan, `'text'` elsewhere. */
  dataType: string;
  /** Requests in flight at once; more wait in a queue (WeChat allows 10). */
  concurrency: number;
}

const HOST_TIMEOUT_LIMIT = 60000;

/** A transport over a mini-program host's `request()`. */
export function createMiniProgramTransport(options: MiniProgramTransportOptions): Transport {
  const { request, dataType, concurrency } = options;
  let active = 0;
  // Waiting requests in arrival order. An aborted one stays in place, settled, and is skipped
  // when its turn comes: removal is O(1) however long the queue.
  let queue: Array<() => void> = [];
  let head = 0;
  let draining = false;

  // Freed slots are refilled a microtask later: when one signal cancels thousands of requests
  // at once, the queued ones are all settled by then and skipped, none started only to be
  // aborted.
  const drain = () => {
    draining = false;
    while (head < queue.length) {
      if (active >= concurrency) break; // start() takes a slot
      queue[head++]();
    }
    if (head === queue.length) {
      queue = [];
      head = 0;
    }
  };
  const release = () => {
    active--;
    if (!draining) {
      draining = true;
      Promise.resolve().then(drain);
    }
  };

  return (req) =>
    new Promise<TransportResponse>((resolve, reject) => {
      const { signal } = req;
      let settled = false;
      let started = false;
      let task: unknown;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const context = { method: req.method, url: req.url };

      // Every request settles exactly once, whatever order success/fail/complete/abort come in.
      const finish = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) clearTimeout(timer);
        if (signal) signal.removeEventListener('abort', onAbort);
        if (started) release();
        outcome();
      };
      const abortTask = () => {
        const t = task as { abort?: () => void } | undefined;
        if (t && typeof t.abort === 'function') {
          try {
            t.abort();
          } catch {
            // the host may throw on a finished task
          }
        }
      };
      // Settle first, then abort the task: hosts answer abort() with a synchronous fail('abort').
      const onAbort = () => {
        finish(() => reject(abortError(signal as SignalLike, context)));
        abortTask();
      };
      // What the host hands to a callback is read inside a try: a host that calls success()
      // with nothing, or with a broken header list, still settles the request.
      const settleWith = (read: () => TransportResponse | Error, answer: string) => {
        let outcome: TransportResponse | Error;
        try {
          outcome = read();
        } catch (error) {
          outcome = new NetworkError('the host answered ' + answer + ' with something that is not a response (' + (error instanceof Error ? error.message : String(error)) + ')', Object.assign({ cause: error }, context));
        }
        finish(() => (outcome instanceof Error ? reject(outcome) : resolve(outcome)));
      };

      function start(): void {
        if (settled) return;
        started = true;
        active++;
        timer = setTimeout(() => {
          finish(() => reject(new TimeoutError('no response within ' + req.timeout + ' ms (timeout)', context)));
          abortTask();
        }, req.timeout);
        try {
          task = request(
            hostOptions(
              req,
              dataType,
              (result) => settleWith(() => toResponse(result), 'success()'),
              (error) => settleWith(() => (statusOf(error) ? toResponse(error) : toError(error || {}, req)), 'fail()'),
            ),
          );
          // Taro returns a Promise with .abort; its rejection is reported through fail too.
          const maybe = task as { then?: unknown; catch?: (f: () => void) => unknown };
          if (maybe && typeof maybe.then === 'function' && typeof maybe.catch === 'function') maybe.catch(() => {});
        } catch (error) {
          finish(() => reject(new NetworkError('the host request() threw: ' + (error instanceof Error ? error.message : String(error)), Object.assign({ cause: error }, context))));
        }
      }

      if (signal) {
        if (signal.aborted) return reject(abortError(signal, context));
        signal.addEventListener('abort', onAbort, { once: true });
      }
      if (active < concurrency) start();
      else queue.push(start);
    });
}

function hostOptions(req: TransportRequest, dataType: string, success: (r: HostResult) => void, fail: (r: HostResult) => void): HostRequestOptions {
  const options: HostRequestOptions = {
    url: req.url,
    method: req.method,
    header: req.headers,
    headers: req.headers,
    dataType,
    responseType: 'text',
    timeout: Math.min(req.timeout, HOST_TIMEOUT_LIMIT),
    success,
    fail,
  };
  if (req.body !== undefined) options.data = req.body;
  return options;
}

function statusOf(result: HostResult | undefined): number | undefined {
  if (!result || typeof result !== 'object') return undefined;
  const status = result.statusCode !== undefined ? result.statusCode : result.status;
  return typeof status === 'number' && status > 0 ? status : undefined;
}

function toResponse(result: HostResult): TransportResponse {
  const status = statusOf(result);
  if (!status) throw new Error('no HTTP status in ' + (result === null || typeof result !== 'object' ? String(result) : 'its answer'));
  const headers: Record<string, string> = {};
  const raw = result.header !== undefined ? result.header : result.headers;
  // DingTalk on Android gives [{ key: value }, ...]; every host may use any key case.
  const groups = Array.isArray(raw) ? raw : raw ? [raw] : [];
  for (const group of groups) {
    if (!group || typeof group !== 'object') continue;
    for (const key of Object.keys(group)) {
      const value = group[key];
      headers[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    }
  }
  return {
    status,
    headers: { get: (name) => headers[name.toLowerCase()] },
    body: textOf(result.data),
  };
}

/** The body as text: hosts asked for text may still hand over an object or bytes. */
function textOf(data: unknown): string {
  if (data === undefined || data === null) return '';
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return utf8(new Uint8Array(data));
  return JSON.stringify(data);
}

/** UTF-8 bytes to a string without TextDecoder (absent on the hosts). */
function utf8(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i++];
    let code = b;
    if (b >= 0xf0) code = ((b & 7) << 18) | ((bytes[i++] & 63) << 12) | ((bytes[i++] & 63) << 6) | (bytes[i++] & 63);
    else if (b >= 0xe0) code = ((b & 15) << 12) | ((bytes[i++] & 63) << 6) | (bytes[i++] & 63);
    else if (b >= 0xc0) code = ((b & 31) << 6) | (bytes[i++] & 63);
    if (code > 0xffff) {
      code -= 0x10000;
      out += String.fromCharCode(0xd800 + (code >> 10), 0xdc00 + (code & 1023));
    } else out += String.fromCharCode(code);
  }
  return out;
}

function toError(error: HostResult, req: TransportRequest): Error {
  const errMsg = error.errMsg || error.errorMessage || '';
  const code = typeof error.error === 'number' ? error.error : undefined; // Alipay
  const errno = code !== undefined ? code : typeof error.errno === 'number' ? error.errno : error.errCode;
  const context = { method: req.method, url: req.url, errMsg, errno };
  if (code === 13 || /timeout/i.test(errMsg)) return new TimeoutError('the host timed out the request (' + (errMsg || 'error 13') + ')', context);
  if (code === 9 || /abort/i.test(errMsg)) return new AbortError('the host aborted the request (' + (errMsg || 'error 9') + ')', context);
  if (code === 4 || code === 11 || /domain list|not in domain|合法域名/i.test(errMsg)) {
    return new ConfigError(
      req.url.replace(/^(https?:\/\/[^/]+).*$/, '$1') + ' is not an allowed request domain (' + (errMsg || 'error ' + code) + '); add it to the request domain allow-list in the mini-program console (the port must match)',
      context,
    );
  }
  // Interrupted (the app went to the background) and everything else: a retryable network error.
  return new NetworkError('the host request failed: ' + (errMsg || 'error ' + errno), context);
}
