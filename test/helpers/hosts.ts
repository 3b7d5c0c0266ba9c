/**
 * Emulated mini-program hosts: `wx.request`, `my.request` and the variants (tt, swan, qq,
 * uni, Taro), implemented over real node:http so that the transport meets a real server.
 * Each follows its host's documented semantics (docs/maintainers/extending.md, "What each host does"):
 * WeChat family gives HTTP errors in `success`; Alipay gives them in `fail` with
 * `error: 19` and reads only `headers` (older base libraries); Douyin and Baidu accept only
 * `dataType` 'json' or 'string'; WeChat runs at most 10 requests at once and queues the rest in
 * arrival order (a caller's own `wx.request` waits behind the SDK's), and fails uploads and
 * downloads beyond 10 of each. Quirks seen in
 * the field can be switched on per emulator.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { HostDownloadOptions, HostRequestOptions, HostResult, HostUploadOptions } from '../../src/transports/miniprogram/host-api.js';
// The hosts' answer shapes, shared with createMockHost (channel-sdk/testing); the HTTP is this file's.
import {
  defaultMaxConcurrent,
  isWxShaped,
  downloadAnswer,
  hostFailure,
  progressUpdate,
  requestAnswer,
  taroPromise,
  uploadAnswer,
  type HostFailure,
  type MockHostKind,
  type WireAnswer,
} from '../../src/testing/mock-host/host-answers.js';
import { createHostLife, type HostLife, type HostLifeFunctions } from '../../src/testing/mock-host/host-life.js';

export type HostKind = MockHostKind;

export interface HostQuirks {
  /** PC WeChat: a 401 delivered through `fail` with `statusCode`. */
  http401InFail?: boolean;
  /** uni-app on some targets: HTTP errors through `fail` (`request:fail http status error`) with `statusCode`. */
  httpErrorsInFail?: boolean;
  /** Response header keys as sent in mixed case (`Content-Type`, `Retry-After`), or DingTalk's `[{ k: v }]`. */
  headerShape?: 'lower' | 'mixed' | 'array';
  /** After the real callback, call the opposite one too (a host bug the transport must absorb). */
  doubleCallback?: boolean;
  /** Call `complete` before `success`/`fail`. */
  completeFirst?: boolean;
  /** Never call back at all (a hung host). */
  neverCallBack?: boolean;
  /** Refuse URLs outside these origins as the domain allow-list does. */
  allowedOrigins?: string[];
  /** Requests the host runs at once, queueing the rest (WeChat: 10); uploads and downloads beyond as many fail. */
  maxConcurrent?: number;
  /** Alipay before base library 2.8.8: downloadFile's success carries no statusCode. */
  noDownloadStatus?: boolean;
  /** Bytes per write of an upload body (each write, once flushed, is one progress update). @default 64 KiB */
  uploadChunk?: number;
  /** No onAppShow/onAppHide/onNetworkStatusChange/getNetworkType (WeChat before 2.1.2, plugins, Baidu's web build). */
  noLifecycle?: boolean;
}

/** A progress update as a task's onProgressUpdate hands it (upload: sent bytes; download and Alipay: written). */
export type HostProgressUpdate = Record<string, number>;

export interface EmulatedHost {
  kind: HostKind;
  request: (options: HostRequestOptions) => unknown;
  /**
   * The host's uploadFile over real HTTP: reads `filePath` from disk, sends it as multipart with
   * `formData`, reports progress as its writes are flushed, answers `{ data, statusCode, header }`.
   */
  uploadFile: (options: HostUploadOptions) => unknown;
  /** The host's downloadFile: streams the body to a temp file (or `filePath`), reporting progress. */
  downloadFile: (options: HostDownloadOptions) => unknown;
  /** Every options object the host received, per API. */
  calls: HostRequestOptions[];
  uploads: HostUploadOptions[];
  downloads: HostDownloadOptions[];
  /** The host's FileSystemManager, as far as the SDK uses it: unlink() of a file. */
  getFileSystemManager(): { unlink(options: { filePath: string; success?: () => void; fail?: (error: HostResult) => void }): void };
  /** Every path unlink() removed. */
  removed: string[];
  /** Every progress update handed out, per API. */
  progress: { upload: HostProgressUpdate[]; download: HostProgressUpdate[] };
  /** Highest number of requests in flight at once (and of uploads, and of downloads). */
  maxSeen: number;
  maxSeenFiles: { upload: number; download: number };
  /** The next request fails as the host reports a background interruption / a network error. */
  interruptNext(): void;
  failNextWith(result: HostResult): void;
  aborted: number;
  /** The app's life and the network (host-life.ts); the host's functions are on the host itself. */
  life: HostLife;
  /** The app goes to the background; calls in flight go on (see interruptInFlight). */
  hide(): void;
  /** The app comes back: failures held by interruptInFlight({ onShow: true }) are delivered, then onAppShow runs. */
  show(): void;
  /**
   * The network comes or goes. When it goes, the calls in flight fail as WeChat fails them on a
   * network change (after onNetworkStatusChange's listeners), and a request made while it is
   * down fails as Android WeChat's do.
   */
  setNetwork(state: { isConnected: boolean }): void;
  /**
   * Fails every call in flight as the host does to a hidden app's (WeChat: `request:fail
   * interrupted`, errno 600003). `onShow`: the failures are delivered only when the app is shown
   * again, before its onAppShow listeners (the JS thread was suspended meanwhile).
   */
  interruptInFlight(options?: { onShow?: boolean }): void;
}

/** An emulated host with its app-life functions (absent with the noLifecycle quirk). */
export type EmulatedHostWithLife = EmulatedHost & Partial<HostLifeFunctions>;

// Where the emulated hosts keep their temp files (wxfile://tmp_... on a device), removed at exit.
let filesRoot: string | undefined;
function tempFile(kind: HostKind): string {
  if (!filesRoot) {
    const root = mkdtempSync(join(tmpdir(), 'channel-sdk-hosts-'));
    filesRoot = root;
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  }
  return join(filesRoot, kind + '_tmp_' + randomBytes(6).toString('hex'));
}

export function createHost(kind: HostKind, quirks: HostQuirks = {}): EmulatedHostWithLife {
  let active = 0;
  const life = createHostLife(kind);
  // Every call in flight, as the function that fails it.
  const inFlight = new Set<(result: HostResult) => void>();
  // Failures held back until the app is shown again (interruptInFlight({ onShow: true })).
  let onShow: Array<() => void> = [];
  // Requests beyond the limit, in arrival order: each starts as a running one settles.
  const waiting: Array<() => void> = [];
  let injected: HostResult | undefined;
  const max = quirks.maxConcurrent ?? defaultMaxConcurrent(kind);
  const host: EmulatedHostWithLife = {
    kind,
    life,
    ...(quirks.noLifecycle ? {} : life.functions),
    hide: () => life.hide(),
    show: () =>
      life.show(() => {
        const held = onShow;
        onShow = [];
        held.forEach((deliver) => deliver());
      }),
    setNetwork: (state) => {
      life.setNetwork(state);
      if (state.isConnected) return;
      for (const fail of inFlight) {
        inFlight.delete(fail);
        fail(hostFailure(kind, 'request', 'network', 'errcode:10011 cronet_error_code:0 error_msg:network change, cancel all task'));
      }
    },
    interruptInFlight: (options = {}) => {
      for (const fail of inFlight) {
        inFlight.delete(fail);
        const result = hostFailure(kind, 'request', 'interrupted');
        if (options.onShow) onShow.push(() => fail(result));
        else fail(result);
      }
    },
    calls: [],
    uploads: [],
    downloads: [],
    progress: { upload: [], download: [] },
    maxSeen: 0,
    maxSeenFiles: { upload: 0, download: 0 },
    aborted: 0,
    removed: [],
    getFileSystemManager: () => ({
      unlink: ({ filePath, success, fail }) => {
        try {
          unlinkSync(filePath);
          host.removed.push(filePath);
          success?.();
        } catch {
          fail?.(isWxShaped(kind) ? { errMsg: 'unlink:fail no such file or directory ' + filePath } : { error: 10022, errorMessage: 'file not found' });
        }
      },
    }),
    uploadFile: (options) => transfer('upload', options),
    downloadFile: (options) => transfer('download', options),
    interruptNext: () => void (injected = hostFailure(kind, 'request', 'interrupted')),
    failNextWith: (result) => void (injected = result),
    request: (options) => {
      host.calls.push(options);
      let done = false;
      let running = false;
      let onAbort: (() => void) | undefined;
      const deliver = (kindOf: 'success' | 'fail', result: HostResult) => {
        if (done) return;
        done = true;
        inFlight.delete(cut);
        if (running) {
          active--;
          const next = waiting.shift();
          if (next) next();
        } else waiting.splice(waiting.indexOf(run), 1);
        callBack(options, quirks, kindOf, result, { errMsg: 'request:fail late duplicate', error: 12 }, { status: 200 });
      };
      const fail = (failure: HostFailure, detail?: string) => deliver('fail', hostFailure(kind, 'request', failure, detail));
      const cut = (result: HostResult) => {
        onAbort?.();
        deliver('fail', result);
      };
      inFlight.add(cut);

      // WeChat's RequestTask events: the headers (with statusCode, as on a device) as they arrive,
      // and with enableChunked each chunk of the body as an ArrayBuffer; none after the task ended.
      const heard = { headers: [] as Array<(r: object) => void>, chunks: [] as Array<(r: object) => void> };
      const emit = (list: Array<(r: object) => void>, event: object) => {
        if (!done) for (const listener of list.slice()) listener(event);
      };
      const task = {
        abort: () => {
          host.aborted++;
          onAbort?.();
          fail('abort');
        },
        ...(kind === 'wx'
          ? {
              onHeadersReceived: (listener: (r: object) => void) => void heard.headers.push(listener),
              offHeadersReceived: (listener: (r: object) => void) => void heard.headers.splice(heard.headers.indexOf(listener), 1),
              onChunkReceived: (listener: (r: object) => void) => void heard.chunks.push(listener),
              offChunkReceived: (listener: (r: object) => void) => void heard.chunks.splice(heard.chunks.indexOf(listener), 1),
            }
          : {}),
      };
      const headersIn = isWxShaped(kind) ? options.header : options.headers; // Alipay (older) reads only `headers`
      const dataType = options.dataType ?? 'json';
      const send = () => {
        if (done) return;
        if ((kind === 'tt' || kind === 'swan') && dataType !== 'json' && dataType !== 'string') return fail('params', `invalid dataType ${dataType}`);
        if (injected) {
          const result = injected;
          injected = undefined;
          return deliver('fail', result);
        }
        // Android WeChat's form of a request made offline (inferred from its error codes: docs/maintainers/extending.md).
        if (!life.isConnected) return fail('network', '-106:net::ERR_INTERNET_DISCONNECTED');
        const origin = options.url.replace(/^(https?:\/\/[^/]+).*$/, '$1');
        if (quirks.allowedOrigins && quirks.allowedOrigins.indexOf(origin) < 0) {
          return fail('domain');
        }
        const url = new URL(options.url);
        const { body, query } = encodeData(options.data, options.method ?? 'GET', headersIn);
        const req = httpRequest(
          {
            hostname: url.hostname,
            port: url.port,
            path: url.pathname + (query ? (url.search ? url.search + '&' : '?') + query : url.search),
            method: options.method ?? 'GET',
            headers: { 'content-type': 'application/json', ...headersIn },
          },
          (res) => {
            const chunks: Buffer[] = [];
            emit(heard.headers, { header: { ...res.headers }, statusCode: res.statusCode });
            res.on('data', (c: Buffer) => {
              chunks.push(c);
              if (options.enableChunked) emit(heard.chunks, { data: new Uint8Array(c).buffer });
            });
            res.on('end', () => {
              const answer = wireAnswer(res.statusCode ?? 0, res.rawHeaders, Buffer.concat(chunks));
              const shape = quirks.headerShape ?? (kind === 'my' ? 'lower' : 'mixed');
              const [outcome, result] = requestAnswer(kind, answer, { dataType, responseType: options.responseType }, shape);
              const status = answer.status;
              if (outcome === 'success' && ((quirks.http401InFail && status === 401) || (quirks.httpErrorsInFail && status >= 400))) {
                return deliver('fail', { ...result, errMsg: 'request:fail http status error' });
              }
              deliver(outcome, result);
            });
          },
        );
        onAbort = () => req.destroy();
        const timeout = options.timeout ?? (kind === 'my' ? 30000 : 60000);
        req.setTimeout(timeout, () => {
          req.destroy();
          fail('timeout');
        });
        req.on('error', (error: NodeJS.ErrnoException) => {
          fail('network', error.code ?? error.message);
        });
        if (body !== undefined) req.write(body);
        req.end();
      };
      function run() {
        running = true;
        active++;
        host.maxSeen = Math.max(host.maxSeen, active);
        setTimeout(send, 0);
      }
      if (active < max) run();
      else waiting.push(run);
      // Taro.request returns a Promise with .abort and also calls the callbacks.
      return kind === 'Taro' ? taroPromise(options, task) : task;
    },
  };

  const filesActive = { upload: 0, download: 0 };
  const api = { upload: 'uploadFile', download: 'downloadFile' } as const;
  /** uploadFile / downloadFile: the same callback, fail and abort semantics as request. */
  function transfer(which: 'upload' | 'download', options: HostUploadOptions | HostDownloadOptions): unknown {
    if (which === 'upload') host.uploads.push(options as HostUploadOptions);
    else host.downloads.push(options as HostDownloadOptions);
    let done = false;
    let req: ClientRequest | undefined;
    const listeners: Array<(update: HostProgressUpdate) => void> = [];
    const deliver = (kindOf: 'success' | 'fail', result: HostResult) => {
      if (done) return;
      done = true;
      filesActive[which]--;
      callBack(options, quirks, kindOf, result, { errMsg: api[which] + ':fail late duplicate', error: 12 }, { tempFilePath: '/duplicate' });
    };
    const fail = (failure: HostFailure, detail?: string) => deliver('fail', hostFailure(kind, api[which], failure, detail));
    const progress = (sent: number, total: number) => {
      const update = progressUpdate(kind, api[which], sent, total);
      host.progress[which].push(update);
      for (const listener of listeners.slice()) listener(update);
    };
    filesActive[which]++;
    host.maxSeenFiles[which] = Math.max(host.maxSeenFiles[which], filesActive[which]);
    const task = {
      abort: () => {
        host.aborted++;
        req?.destroy();
        fail('abort');
      },
      onProgressUpdate: (listener: (update: HostProgressUpdate) => void) => void listeners.push(listener),
      offProgressUpdate: (listener: (update: HostProgressUpdate) => void) => void listeners.splice(listeners.indexOf(listener), 1),
    };
    setTimeout(() => {
      if (done) return;
      if (filesActive[which] > max) return fail('throttled');
      if (injected) {
        const result = injected;
        injected = undefined;
        return deliver('fail', result);
      }
      const origin = options.url.replace(/^(https?:\/\/[^/]+).*$/, '$1');
      if (quirks.allowedOrigins && quirks.allowedOrigins.indexOf(origin) < 0) return fail('domain');
      const url = new URL(options.url);
      const headersIn = { ...(isWxShaped(kind) ? options.header : (options.headers ?? options.header)) } as Record<string, string>;
      let body: Buffer | undefined;
      if (which === 'upload') {
        const o = options as HostUploadOptions;
        // Alipay: the field name may come as fileName (older clients), fileType is required.
        const field = kind === 'my' ? (o.name ?? o.fileName) : o.name;
        if (!o.filePath || !field) return fail('params', 'parameter error: filePath and name are required');
        if (kind === 'my' && ['image', 'video', 'audio'].indexOf(String(o.fileType)) < 0)
          return fail('params', 'parameter error: fileType must be image, video or audio');
        let bytes: Buffer;
        try {
          bytes = readFileSync(o.filePath);
        } catch {
          return fail('params', 'file not found: ' + o.filePath);
        }
        const boundary = '----HostFormBoundary' + randomBytes(8).toString('hex');
        const parts: Buffer[] = [];
        for (const [key, value] of Object.entries(o.formData ?? {})) {
          if (typeof value !== 'string') return fail('params', 'parameter error: formData.' + key + ' must be a string');
          parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${key}"\r\n\r\n${value}\r\n`));
        }
        parts.push(
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${basename(o.filePath)}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
          ),
          bytes,
          Buffer.from(`\r\n--${boundary}--\r\n`),
        );
        body = Buffer.concat(parts);
        headersIn['content-type'] = 'multipart/form-data; boundary=' + boundary;
        headersIn['content-length'] = String(body.length);
      }
      req = httpRequest(
        { hostname: url.hostname, port: url.port, path: url.pathname + url.search, method: which === 'upload' ? 'POST' : 'GET', headers: headersIn },
        (res) => {
          const status = res.statusCode ?? 0;
          const shape = quirks.headerShape ?? (kind === 'my' ? 'lower' : 'mixed');
          if (which === 'upload') {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const result = uploadAnswer(kind, wireAnswer(status, res.rawHeaders, Buffer.concat(chunks)), shape);
              if (quirks.httpErrorsInFail && status >= 400) return deliver('fail', { ...result, errMsg: 'uploadFile:fail http status error' });
              deliver('success', result);
            });
            return;
          }
          // Any status is written to the file, as the hosts do: the caller must look at statusCode.
          const o = options as HostDownloadOptions;
          const target = o.filePath ?? tempFile(kind);
          const total = Number(res.headers['content-length']) || 0;
          let written = 0;
          const out = createWriteStream(target);
          res.on('data', (c: Buffer) => {
            written += c.length;
            progress(written, total);
          });
          res.pipe(out);
          out.on('finish', () => {
            const result = downloadAnswer(kind, status, wireAnswer(status, res.rawHeaders).headers, target, o.filePath !== undefined, shape);
            if (kind === 'my' && quirks.noDownloadStatus) result.statusCode = undefined;
            if (quirks.httpErrorsInFail && status >= 400) return deliver('fail', { ...result, errMsg: 'downloadFile:fail http status error' });
            deliver('success', result);
          });
          res.on('error', () => fail('interrupted', 'network interrupted'));
        },
      );
      req.setTimeout(options.timeout ?? 60000, () => {
        req?.destroy();
        fail('timeout');
      });
      req.on('error', (error: NodeJS.ErrnoException) => fail('network', error.code ?? error.message));
      if (body) {
        // Written in chunks; each one flushed to the socket is a progress update, as on a device.
        const size = quirks.uploadChunk ?? 64 * 1024;
        const total = body.length;
        const sendFrom = (at: number): void => {
          if (done || !req) return;
          if (at >= total) return void req.end();
          const next = Math.min(total, at + size);
          req.write(body!.subarray(at, next), () => {
            if (done) return;
            progress(next, total);
            sendFrom(next);
          });
        };
        sendFrom(0);
      } else req.end();
    }, 0);
    // Taro's uploadFile/downloadFile return a Promise carrying the task's methods (and `progress`).
    return kind === 'Taro' ? taroPromise(options, Object.assign({ progress: task.onProgressUpdate }, task)) : task;
  }

  return host;
}

/**
 * Calls the callback a host calls for `kindOf`, honouring the quirks: none at all, `complete`
 * first, or a late duplicate of the opposite callback (`lateFail`, or the result made a 200 with
 * `lateSuccess` added).
 */
function callBack(
  // Each callback is optional, as on the hosts (luch-request passes only `complete`).
  options: { success?(r: HostResult): void; fail?(r: HostResult): void; complete?(r: HostResult): void },
  quirks: HostQuirks,
  kindOf: 'success' | 'fail',
  result: HostResult,
  lateFail: HostResult,
  lateSuccess: HostResult,
): void {
  if (quirks.neverCallBack) return;
  const first = kindOf === 'success' ? options.success : options.fail;
  const other = kindOf === 'success' ? options.fail : options.success;
  if (quirks.completeFirst) options.complete?.(result);
  first?.(result);
  if (!quirks.completeFirst) options.complete?.(result);
  if (quirks.doubleCallback)
    setTimeout(() => other?.(kindOf === 'success' ? lateFail : { ...result, statusCode: 200, data: '{"code":0,"data":"duplicate"}', ...lateSuccess }), 0);
}

/**
 * `data` as the hosts send it (wx.request's documented rules): for a GET, an object becomes the
 * query string; otherwise an object is JSON, or a query string under
 * `content-type: application/x-www-form-urlencoded`; a string or an ArrayBuffer is sent as it is.
 */
function encodeData(data: unknown, method: string, headers: Record<string, string> = {}): { body?: string | Buffer; query?: string } {
  if (data === undefined || data === null) return {};
  const form = (value: object) =>
    Object.entries(value)
      .map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(String(v)))
      .join('&');
  if (method.toUpperCase() === 'GET') return typeof data === 'object' && !(data instanceof ArrayBuffer) ? { query: form(data) } : {};
  if (data instanceof ArrayBuffer) return { body: Buffer.from(data) };
  if (typeof data !== 'object') return { body: String(data) };
  const type = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? 'application/json';
  return { body: /x-www-form-urlencoded/i.test(type) ? form(data) : JSON.stringify(data) };
}

/** A node:http answer as the hosts receive it: the status, the raw header pairs, the body. */
function wireAnswer(status: number, raw: string[], body: Uint8Array = new Uint8Array(0)): WireAnswer {
  const headers: Array<[string, string]> = [];
  for (let i = 0; i < raw.length; i += 2) headers.push([raw[i], raw[i + 1]]);
  return { status, headers, body };
}
