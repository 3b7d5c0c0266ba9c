// What a mini-program host hands to `success` and `fail`, host by host, as their documentation
// says (docs/maintainers/extending.md, "What each host does"): createMockHost answers with these,
// and so do the test suite's emulations over real HTTP (test/helpers/hosts.ts). No I/O here.
import type { HostResult } from '../../transports/miniprogram/host-api.js';
import type { HostName } from '../../transports/miniprogram/host-globals.js';

/** The hosts a mock can stand in for: WeChat, Alipay, Douyin, Baidu, QQ, and the uni-app and Taro APIs (HOST_NAMES). */
export type MockHostKind = HostName;
/** The three host functions that reach a server. */
export type HostApi = 'request' | 'uploadFile' | 'downloadFile';
/** Why a call failed before any answer. */
export type HostFailure = 'abort' | 'timeout' | 'throttled' | 'domain' | 'network' | 'interrupted' | 'params';

/** Everyone but Alipay answers in WeChat's shape (`statusCode`, `header`, `errMsg`). */
export const isWxShaped = (kind: MockHostKind): boolean => kind !== 'my';

/** Most calls of one API in flight at once: WeChat (and QQ, which mirrors it) 10; the others document none. */
export const defaultMaxConcurrent = (kind: MockHostKind): number => (kind === 'wx' || kind === 'qq' ? 10 : Infinity);

// [WeChat errno, Alipay error, what the errMsg says after "<api>:fail "] for each failure.
const FAILURES: Record<HostFailure, [number, number, string]> = {
  abort: [1, 9, 'abort'],
  timeout: [5, 13, 'timeout'],
  throttled: [600000, 20, 'exceed max task count'],
  domain: [600002, 11, 'url not in domain list'],
  network: [600001, 12, 'network error'],
  interrupted: [600003, 12, 'interrupted'],
  params: [2, 2, 'parameter error'],
};

/** The fail object of `api` for `failure`: `{ errMsg, errno }`, or Alipay's `{ error, errorMessage }`. */
export function hostFailure(kind: MockHostKind, api: HostApi, failure: HostFailure, detail?: string): HostResult {
  const [errno, error, text] = FAILURES[failure];
  const message =
    api + ':fail ' + (detail ?? (failure === 'throttled' && api !== 'request' ? `exceed max ${api.slice(0, -4).toLowerCase()} task count` : text));
  return isWxShaped(kind) ? { errMsg: message, errno } : { error, errorMessage: message };
}

/** A server's answer as a host receives it. */
export interface WireAnswer {
  status: number;
  /** Header names as the server sent them, in order. */
  headers: Array<[string, string]>;
  body: Uint8Array;
}

/** How a host hands response header names over: see {@link shapeHeaders}. */
export type HeaderShape = 'lower' | 'mixed' | 'array';
const defaultShape = (kind: MockHostKind): HeaderShape => (isWxShaped(kind) ? 'mixed' : 'lower');

/**
 * Response headers as a host hands them over: Alipay lower-cases the names; the WeChat family
 * keeps the server's case, shown here as `Content-Type` (the SDK must not rely on either);
 * DingTalk gives `[{ name: value }]` (`array`).
 */
export function shapeHeaders(headers: Array<[string, string]>, shape: HeaderShape): HostResult['header'] {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) {
    const key = shape === 'lower' ? name.toLowerCase() : name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
    out[key] = value;
  }
  return shape === 'array' ? Object.keys(out).map((key) => ({ [key]: out[key] })) : out;
}

const text = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');

/**
 * What `request()` calls back with for an answer: `['success', …]` or `['fail', …]`.
 * WeChat family: every status in `success` (`statusCode`, `header`, `data`); `dataType: 'json'`
 * (the default) parses the body and keeps the text when it is not JSON. Alipay: `status`,
 * `headers`; HTTP 400 and above in `fail` with `error: 19`; a body that is not JSON under
 * `dataType: 'json'` fails with `error: 14`. `responseType: 'arraybuffer'` gives the bytes.
 */
export function requestAnswer(
  kind: MockHostKind,
  answer: WireAnswer,
  options: { dataType?: unknown; responseType?: unknown },
  shape: HeaderShape = defaultShape(kind),
): ['success' | 'fail', HostResult] {
  const { status, body } = answer;
  let data: unknown;
  if (options.responseType === 'arraybuffer') data = body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength);
  else {
    data = text(body);
    if ((options.dataType ?? 'json') === 'json') {
      try {
        data = JSON.parse(data as string);
      } catch {
        if (!isWxShaped(kind)) return ['fail', { error: 14, errorMessage: 'JSON parse error', status }];
        // WeChat keeps the text when JSON.parse fails.
      }
    }
  }
  const headers = shapeHeaders(answer.headers, shape);
  if (!isWxShaped(kind)) {
    if (status >= 400) return ['fail', { error: 19, errorMessage: 'http status error', status, data, headers }];
    return ['success', { status, data, headers }];
  }
  return ['success', { statusCode: status, data, header: headers, errMsg: 'request:ok' }];
}

/** What `uploadFile()` calls back with: the body as text, never parsed, every status in `success`. */
export function uploadAnswer(kind: MockHostKind, answer: WireAnswer, shape: HeaderShape = defaultShape(kind)): HostResult {
  return { statusCode: answer.status, data: text(answer.body), header: shapeHeaders(answer.headers, shape), errMsg: 'uploadFile:ok' };
}

/**
 * What `downloadFile()` calls back with once the body is written to `path`: every status in
 * `success` (the caller must look at `statusCode`), `filePath` when the caller chose where, else
 * `tempFilePath`; Alipay adds `apFilePath` and `headers` (and before base library 2.8.8 no statusCode).
 */
export function downloadAnswer(
  kind: MockHostKind,
  status: number,
  headers: Array<[string, string]>,
  path: string,
  chosen: boolean,
  shape: HeaderShape = defaultShape(kind),
): HostResult {
  const header = shapeHeaders(headers, shape);
  const result: HostResult = chosen
    ? { filePath: path, statusCode: status, header, errMsg: 'downloadFile:ok' }
    : { tempFilePath: path, statusCode: status, header, errMsg: 'downloadFile:ok' };
  if (!isWxShaped(kind)) Object.assign(result, { apFilePath: result.tempFilePath, headers: header });
  return result;
}

/** A task's progress update: an upload counts sent bytes, a download (and every Alipay transfer) written ones. */
export function progressUpdate(kind: MockHostKind, api: 'uploadFile' | 'downloadFile', done: number, total: number): Record<string, number> {
  const progress = total ? Math.floor((done / total) * 100) : 0;
  return api === 'uploadFile' && isWxShaped(kind)
    ? { progress, totalBytesSent: done, totalBytesExpectedToSend: total }
    : { progress, totalBytesWritten: done, totalBytesExpectedToWrite: total };
}

/** Taro's way: a Promise that settles with the callbacks (which it still calls), carrying the task's methods. */
export function taroPromise(options: { success(r: HostResult): void; fail(r: HostResult): void }, methods: object): Promise<HostResult> {
  const promise = new Promise<HostResult>((resolve, reject) => {
    const { success, fail } = options;
    options.success = (r) => (success?.(r), resolve(r));
    options.fail = (r) => (fail?.(r), reject(r));
  });
  // A caller that only uses the callbacks must not see an unhandled rejection.
  promise.catch(() => {});
  return Object.assign(promise, methods);
}
