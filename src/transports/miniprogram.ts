import { AbortError } from '../errors/AbortError.js';
import { ConfigError } from '../errors/ConfigError.js';
import { NetworkError } from '../errors/NetworkError.js';
import { TimeoutError } from '../errors/TimeoutError.js';
import { abortError } from '../core/signal.js';
import type { CallKind } from '../core/client.js';
import type { FileSpec, Progress, SignalLike, Transport, TransportRequest, TransportResponse } from '../core/types.js';
import { isChannelError } from '../errors/ChannelError.js';

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
  /** `'text'`, or `'arraybuffer'` when asked for through hostOptions. */
  responseType: string;
  timeout: number;
  success(result: HostResult): void;
  fail(error: HostResult): void;
  complete?(result: HostResult): void;
  /** Whatever `hostOptions` adds (enableHttp2, enableCache...). */
  [option: string]: unknown;
}

/** What the SDK hands to a host's `uploadFile()` (WeChat and Alipay shapes together). */
export interface HostUploadOptions {
  url: string;
  filePath: string;
  /** The multipart field name. */
  name: string;
  /** Alipay's older name for `name`; sent to Alipay only. */
  fileName?: string;
  /** Alipay: image, video or audio (required there); from hostOptions, else from the file's extension. */
  fileType?: string;
  header: Record<string, string>;
  headers: Record<string, string>;
  formData: Record<string, string>;
  timeout: number;
  success(result: HostResult): void;
  fail(error: HostResult): void;
  [option: string]: unknown;
}

/** What the SDK hands to a host's `downloadFile()`. */
export interface HostDownloadOptions {
  url: string;
  header: Record<string, string>;
  headers: Record<string, string>;
  /** Where the host saves the file (a user-data path); a temp file when absent. */
  filePath?: string;
  timeout: number;
  success(result: HostResult): void;
  fail(error: HostResult): void;
  [option: string]: unknown;
}

/** What a host hands to `success` or `fail`; every field optional because hosts differ. */
export interface HostResult {
  statusCode?: number;
  status?: number;
  header?: HostHeaders;
  headers?: HostHeaders;
  data?: unknown;
  /** downloadFile: the temp file (Alipay before base library 2.7.23: `apFilePath`). */
  tempFilePath?: string;
  apFilePath?: string;
  filePath?: string;
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

// Compared bivariantly (a method's parameter), so that every host's own function type fits as
// its typings declare it: wx.request's `method` is a union, Alipay's `dataType` another, Taro's
// request is generic; each takes at least `{ url }` (issue #23). The SDK's own call sites use the
// precise option types above.
type HostFunction = { bivarianceHack(options: { url: string }): unknown }['bivarianceHack'];

/**
 * A host's `request()`: returns a task with `abort()` (or a Promise carrying one, as Taro does).
 * Any host's own function fits: `wx.request`, `my.request`, `tt.request`, `swan.request`,
 * `qq.request`, `uni.request`, `Taro.request`, or a wrapper taking {@link HostRequestOptions}.
 */
export type HostRequest = HostFunction;
/** A host's `uploadFile()` (`wx.uploadFile`, `my.uploadFile`, ... `Taro.uploadFile`): a task with `abort()` and `onProgressUpdate()`. */
export type HostUploadFile = HostFunction;
/** A host's `downloadFile()` (`wx.downloadFile`, ... `Taro.downloadFile`): a task with `abort()` and `onProgressUpdate()`. */
export type HostDownloadFile = HostFunction;

/** What the task a host returns may offer (Taro's is a Promise with these as well). */
interface HostTask {
  abort?: () => void;
  onProgressUpdate?: (listener: (update: HostProgress) => void) => void;
  then?: unknown;
  catch?: (f: () => void) => unknown;
}

/** A task's progress update: upload counts sent bytes, download written ones (Alipay's upload too). */
interface HostProgress {
  progress?: number;
  totalBytesSent?: number;
  totalBytesExpectedToSend?: number;
  totalBytesWritten?: number;
  totalBytesExpectedToWrite?: number;
}

export interface MiniProgramTransportOptions {
  request: HostRequest;
  /** Found at the first upload (a host without one fails only then, with a ConfigError). */
  uploadFile: () => HostUploadFile;
  /** Found at the first download. */
  downloadFile: () => HostDownloadFile;
  /** The uploads end at Alipay's (or DingTalk's) uploadFile, whose options differ. */
  alipay?: boolean;
  /** `dataType` that makes the host return raw text: `'string'` for tt/swan, `'text'` elsewhere. */
  dataType: string;
  /** Requests in flight at once, and as many uploads and downloads; more wait in a queue (WeChat allows 10 of each). */
  concurrency: number;
  /** Removes a file the host wrote (a download's error body); best effort, never throws. */
  removeFile?: (path: string) => void;
}

const HOST_TIMEOUT_LIMIT = 60000;

/** Runs at most `concurrency` tasks at once; the rest wait in arrival order. */
function limiter(concurrency: number) {
  let active = 0;
  // Waiting tasks in arrival order. An aborted one stays in place, settled, and is skipped
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
  return {
    enter(start: () => void): void {
      if (active < concurrency) start();
      else queue.push(start);
    },
    take: () => void active++,
    release(): void {
      active--;
      if (!draining) {
        draining = true;
        Promise.resolve().then(drain);
      }
    },
  };
}

/** A transport over a mini-program host's `request()`, `uploadFile()` and `downloadFile()`. */
export function createMiniProgramTransport(options: MiniProgramTransportOptions): Transport {
  const { request, dataType, concurrency, alipay } = options;
  // The host's limits are per API (WeChat: 10 requests, 10 uploads, 10 downloads at once).
  const slots = { request: limiter(concurrency), upload: limiter(concurrency), download: limiter(concurrency) };

  return (req) =>
    new Promise<TransportResponse>((resolve, reject) => {
      const { signal, file } = req;
      const kind = file ? file.kind : 'request';
      const slot = slots[kind];
      let settled = false;
      let started = false;
      let task: HostTask | undefined;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const context = { method: req.method, url: req.url };

      // Every request settles exactly once, whatever order success/fail/complete/abort come in.
      const finish = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) clearTimeout(timer);
        if (signal) signal.removeEventListener('abort', onAbort);
        if (started) slot.release();
        outcome();
      };
      const abortTask = () => {
        const t = task;
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
      const read = (result: HostResult) => (kind === 'download' ? toDownload(result, options.removeFile) : toResponse(result, !!req.raw));
      const success = (result: HostResult) => settleWith(() => read(result), 'success()');
      const fail = (error: HostResult) => settleWith(() => (statusOf(error) ? read(error) : toError(error || {}, req, kind)), 'fail()');

      function start(): void {
        if (settled) return;
        started = true;
        slot.take();
        timer = setTimeout(() => {
          finish(() => reject(new TimeoutError('no response within ' + req.timeout + ' ms (timeout)', context)));
          abortTask();
        }, req.timeout);
        try {
          const call = kind === 'request' ? request : kind === 'upload' ? options.uploadFile() : options.downloadFile();
          task = call(kind === 'request' ? requestOptions(req, dataType, success, fail) : fileOptions(req, alipay, success, fail)) as HostTask | undefined;
          // Taro returns a Promise with .abort; its rejection is reported through fail too.
          if (task && typeof task.then === 'function' && typeof task.catch === 'function') task.catch(() => {});
          const onProgress = req.onProgress;
          if (onProgress && task && typeof task.onProgressUpdate === 'function') {
            task.onProgressUpdate((update) => {
              // A download's progress is the file's only. The hosts tell the status at the end, and
              // report an error's body (a 401 before the replay) like a file: the service's error
              // bodies are far below 1 KiB, so nothing is reported before that much has arrived.
              if (!settled && update && !(kind === 'download' && !((update.totalBytesWritten as number) > 1024))) onProgress(progressOf(update));
            });
          }
        } catch (error) {
          finish(() => reject(isChannelError(error) ? error : new NetworkError('the host ' + (kind === 'request' ? 'request' : kind + 'File') + '() threw: ' + (error instanceof Error ? error.message : String(error)), Object.assign({ cause: error }, context))));
        }
      }

      if (signal) {
        if (signal.aborted) return reject(abortError(signal, context));
        signal.addEventListener('abort', onAbort, { once: true });
      }
      slot.enter(start);
    });
}

function requestOptions(req: TransportRequest, dataType: string, success: (r: HostResult) => void, fail: (r: HostResult) => void): HostRequestOptions {
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
  // The SDK's own keys are refused in hostOptions, so these only add or change dataType/responseType.
  return Object.assign(options, req.hostOptions);
}

function fileOptions(req: TransportRequest, alipay: boolean | undefined, success: (r: HostResult) => void, fail: (r: HostResult) => void): HostUploadOptions | HostDownloadOptions {
  const file = req.file as FileSpec;
  // No cap at 60 s here: a large file may take longer, and the hosts document none for files.
  const options = Object.assign({ url: req.url, header: req.headers, headers: req.headers, timeout: req.timeout, success, fail }, file.kind === 'upload' ? { filePath: file.filePath as string, name: file.name, formData: file.formData } : file.filePath && { filePath: file.filePath }, req.hostOptions) as HostUploadOptions;
  if (alipay && file.kind === 'upload') {
    // Alipay: `fileName` is the field name on older clients, and `fileType` is required.
    options.fileName = file.name;
    if (options.fileType === undefined) options.fileType = fileTypeOf(options.filePath);
  }
  return options;
}

/** Alipay's fileType from the file's extension: audio and video by name, image otherwise. */
function fileTypeOf(path: string): string {
  const ext = (/\.([a-z0-9]+)$/i.exec(path) || ['', ''])[1].toLowerCase();
  return /^(mp4|mov|m4v|3gp|avi|webm|mkv|flv)$/.test(ext) ? 'video' : /^(mp3|m4a|aac|wav|amr|ogg|flac|silk)$/.test(ext) ? 'audio' : 'image';
}

/** A task's update in ky's shape; the core keeps percent within 0..1 and never going back. */
function progressOf(update: HostProgress): Progress {
  const transferredBytes = update.totalBytesSent || update.totalBytesWritten || 0;
  const totalBytes = update.totalBytesExpectedToSend || update.totalBytesExpectedToWrite || 0;
  return { percent: totalBytes ? transferredBytes / totalBytes : (update.progress || 0) / 100, transferredBytes, totalBytes };
}

/**
 * A download's answer: its status, and for a 2xx the file. The body of an error is never read
 * as the file: the hosts write it where the file would go (the caller's filePath, or a temp
 * file), so it is removed there, and the path is never reported.
 */
function toDownload(result: HostResult, removeFile: ((path: string) => void) | undefined): TransportResponse {
  const response = toResponse(Object.assign({}, result, { data: undefined }), false);
  const { filePath } = result;
  const tempFilePath = result.tempFilePath || result.apFilePath || filePath;
  if (response.status >= 200 && response.status < 300) {
    if (typeof tempFilePath !== 'string') throw new Error('no tempFilePath or filePath in its answer');
    response.value = typeof filePath === 'string' ? { tempFilePath, filePath, statusCode: response.status } : { tempFilePath, statusCode: response.status };
  } else if (typeof tempFilePath === 'string' && removeFile) removeFile(tempFilePath);
  return response;
}

function statusOf(result: HostResult | undefined): number | undefined {
  if (!result || typeof result !== 'object') return undefined;
  const status = result.statusCode !== undefined ? result.statusCode : result.status;
  return typeof status === 'number' && status > 0 ? status : undefined;
}

function toResponse(result: HostResult, bytes: boolean): TransportResponse {
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
  const response: TransportResponse = {
    status,
    headers: { get: (name) => headers[name.toLowerCase()] },
    body: textOf(result.data),
  };
  // responseType 'arraybuffer' with raw: true resolves to the bytes themselves.
  if (bytes && result.data instanceof ArrayBuffer && status >= 200 && status < 300) response.value = result.data;
  return response;
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

function toError(error: HostResult, req: TransportRequest, kind: CallKind): Error {
  const errMsg = error.errMsg || error.errorMessage || '';
  const code = typeof error.error === 'number' ? error.error : undefined; // Alipay
  const errno = code !== undefined ? code : typeof error.errno === 'number' ? error.errno : error.errCode;
  const context = { method: req.method, url: req.url, errMsg, errno };
  // Alipay's 13 is a timeout for request() only (its downloadFile uses 13 for "no permission").
  if ((code === 13 && kind === 'request') || /timeout/i.test(errMsg)) return new TimeoutError('the host timed out the request (' + (errMsg || 'error 13') + ')', context);
  if (code === 9 || /abort/i.test(errMsg)) return new AbortError('the host aborted the ' + (kind === 'request' ? 'request' : kind) + ' (' + (errMsg || 'error 9') + ')', context);
  if (code === 4 || code === 11 || /domain list|not in domain|合法域名/i.test(errMsg)) {
    return new ConfigError(
      req.url.replace(/^(https?:\/\/[^/]+).*$/, '$1') + ' is not an allowed request domain (' + (errMsg || 'error ' + code) + '); add it to the request domain allow-list in the mini-program console (the port must match)',
      context,
    );
  }
  // Interrupted (the app went to the background) and everything else: a retryable network error.
  return new NetworkError('the host ' + (kind === 'request' ? 'request' : kind + 'File') + ' failed: ' + (errMsg || 'error ' + errno), context);
}
