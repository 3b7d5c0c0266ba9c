import type { HostResult } from '../../transports/miniprogram/host-api.js';
import {
  downloadAnswer,
  hostFailure,
  isWxShaped,
  progressUpdate,
  requestAnswer,
  taroPromise,
  uploadAnswer,
  type HostApi,
  type HostFailure,
  type MockHostKind,
  type WireAnswer,
} from './host-answers.js';
import type { createFiles } from './mock-files.js';
import type { MockCall, MockHostStats, MockRequest } from './types.js';

type Options = Record<string, unknown> & {
  url?: unknown;
  success?(r: HostResult): void;
  fail?(r: HostResult): void;
  complete?(r: HostResult): void;
};

/** What one call asks of the server side: the parts of a {@link MockRequest} the host knows. */
export interface Outgoing {
  api: HostApi;
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: Uint8Array;
  file?: MockRequest['file'];
  /** Aborted once the call has its outcome (its abort, its timeout): a real connection is dropped then. */
  signal?: AbortSignal;
}

/** What the host functions need: the host's shape and limits, the server side, its files and its books. */
export interface CallContext {
  kind: MockHostKind;
  max: number;
  allowedOrigins: string[] | undefined;
  serve(outgoing: Outgoing): Promise<WireAnswer>;
  files: ReturnType<typeof createFiles>;
  calls: MockCall[];
  stats: MockHostStats;
}

const ALIPAY_FILE_TYPES = ['image', 'video', 'audio'];

/**
 * The host's `request`, `uploadFile` and `downloadFile`, in process: each call answers once (on
 * a microtask, after its route), `abort()` fails it with the host's abort, `timeout` (ms) fails
 * a call whose route has not answered, a call past `max` in flight fails as the host does.
 */
export function createCalls(c: CallContext) {
  const { kind } = c;
  const active: Record<HostApi, number> = { request: 0, uploadFile: 0, downloadFile: 0 };

  function call(
    api: HostApi,
    options: Options,
    work: (
      outgoing: Omit<Outgoing, 'body' | 'file'>,
      progress: (update: Record<string, number>) => void,
    ) => Promise<HostResult | ['success' | 'fail', HostResult]>,
  ) {
    const url = typeof options?.url === 'string' ? options.url : '';
    const method = api === 'request' ? String(options.method ?? 'GET').toUpperCase() : api === 'uploadFile' ? 'POST' : 'GET';
    const log: MockCall = { api, method, url };
    c.calls.push(log);
    c.stats[api === 'request' ? 'requests' : api === 'uploadFile' ? 'uploads' : 'downloads']++;
    active[api]++;
    c.stats.maxInFlight = Math.max(c.stats.maxInFlight, active[api]);
    let done = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const settled = new AbortController();
    const listeners: Array<(update: Record<string, number>) => void> = [];
    const deliver = (outcome: 'success' | 'fail', result: HostResult) => {
      if (done) return;
      done = true;
      active[api]--;
      if (timer) clearTimeout(timer);
      settled.abort();
      if (outcome === 'success' || result.status !== undefined) log.status = result.statusCode ?? result.status;
      const callback = outcome === 'success' ? options.success : options.fail;
      callback?.(result);
      options.complete?.(result);
    };
    const fail = (failure: HostFailure, detail?: string) => {
      if (!done) log.failure = failure;
      deliver('fail', hostFailure(kind, api, failure, detail));
    };
    const task: Record<string, unknown> = { abort: () => fail('abort') };
    if (api !== 'request') {
      task.onProgressUpdate = (listener: (update: Record<string, number>) => void) => void listeners.push(listener);
      task.offProgressUpdate = (listener: (update: Record<string, number>) => void) => void listeners.splice(listeners.indexOf(listener) >>> 0, 1);
    } else task.onHeadersReceived = task.offHeadersReceived = () => {};
    const returned = kind === 'Taro' ? taroPromise(options as never, task) : task;
    void Promise.resolve().then(async () => {
      if (done) return;
      if (active[api] > c.max) return fail('throttled');
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        return fail('params', 'invalid url ' + JSON.stringify(url));
      }
      if (c.allowedOrigins && !c.allowedOrigins.includes(parsed.origin)) return fail('domain');
      const timeout = Number(options.timeout);
      if (timeout > 0) timer = setTimeout(() => fail('timeout'), timeout);
      try {
        const header = (isWxShaped(kind) ? options.header : (options.headers ?? options.header)) as Record<string, unknown> | undefined;
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(header ?? {})) headers[name.toLowerCase()] = String(value);
        const result = await work({ api, method, url: parsed, headers, signal: settled.signal }, (update) => {
          if (!done) for (const listener of listeners.slice()) listener(update);
        });
        if (Array.isArray(result)) deliver(result[0], result[1]);
        else deliver('success', result);
      } catch (error) {
        if (error instanceof CallFailure) fail(error.failure, error.message);
        else throw error;
      }
    });
    if (log.token === undefined) log.token = tokenNumber((options.header ?? options.headers) as Record<string, unknown> | undefined);
    return returned;
  }

  return {
    request: (options: Options) =>
      call('request', options, async (outgoing) => {
        const dataType = options.dataType ?? 'json';
        if ((kind === 'tt' || kind === 'swan') && dataType !== 'json' && dataType !== 'string')
          throw new CallFailure('params', `invalid dataType ${String(dataType)}`);
        const { url, body } = requestBody(outgoing, options.data);
        const answer = await c.serve({ ...outgoing, url, body });
        return requestAnswer(kind, answer, { dataType, responseType: options.responseType });
      }),
    uploadFile: (options: Options) =>
      call('uploadFile', options, async (outgoing, progress) => {
        const field = kind === 'my' ? (options.name ?? options.fileName) : options.name;
        if (typeof options.filePath !== 'string' || typeof field !== 'string' || !field)
          throw new CallFailure('params', 'parameter error: filePath and name are required');
        if (kind === 'my' && !ALIPAY_FILE_TYPES.includes(String(options.fileType)))
          throw new CallFailure('params', 'parameter error: fileType must be image, video or audio');
        let bytes: Uint8Array;
        try {
          bytes = c.files.read(options.filePath, 'uploadFile');
        } catch (error) {
          throw new CallFailure('params', (error as Error).message.replace(/^uploadFile:fail /, ''));
        }
        const formData: Record<string, string> = {};
        for (const [name, value] of Object.entries((options.formData as object) ?? {})) formData[name] = String(value);
        const fileName = options.filePath.slice(options.filePath.lastIndexOf('/') + 1);
        progress(progressUpdate(kind, 'uploadFile', Math.floor(bytes.length / 2), bytes.length));
        progress(progressUpdate(kind, 'uploadFile', bytes.length, bytes.length));
        const answer = await c.serve({ ...outgoing, body: new Uint8Array(0), file: { field, fileName, bytes, formData } });
        return uploadAnswer(kind, answer);
      }),
    downloadFile: (options: Options) =>
      call('downloadFile', options, async (outgoing, progress) => {
        const answer = await c.serve({ ...outgoing, body: new Uint8Array(0) });
        // Every status is written to the file, as the hosts do: the caller must look at statusCode.
        const chosen = typeof options.filePath === 'string' ? options.filePath : undefined;
        const extension = /\.[a-z0-9]{1,5}$/i.exec(outgoing.url.pathname)?.[0] ?? '';
        const path = c.files.write(answer.body, chosen, extension);
        const total = answer.body.length;
        progress(progressUpdate(kind, 'downloadFile', Math.floor(total / 2), total));
        progress(progressUpdate(kind, 'downloadFile', total, total));
        return downloadAnswer(kind, answer.status, answer.headers, path, chosen !== undefined);
      }),
  };
}

/** A call that fails as the host fails it (not an answer). */
export class CallFailure extends Error {
  constructor(
    readonly failure: HostFailure,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The URL and body a host sends for `data`: a string or bytes as they are; an object as a GET's
 * query, else as JSON (form-encoded under `x-www-form-urlencoded`), as WeChat does.
 */
function requestBody(outgoing: Omit<Outgoing, 'body' | 'file'>, data: unknown): { url: URL; body: Uint8Array } {
  const empty = { url: outgoing.url, body: new Uint8Array(0) };
  if (data === undefined || data === null) return empty;
  if (typeof data === 'string') return { url: outgoing.url, body: Buffer.from(data) };
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return { url: outgoing.url, body: new Uint8Array(data as ArrayBuffer) };
  const pairs = () => Object.entries(data as object).map(([key, value]) => encodeURIComponent(key) + '=' + encodeURIComponent(String(value)));
  if (outgoing.method === 'GET' || outgoing.method === 'HEAD') {
    const url = new URL(outgoing.url);
    url.search = (url.search ? url.search.slice(1) + '&' : '') + pairs().join('&');
    return { url, body: empty.body };
  }
  const form = /x-www-form-urlencoded/i.test(outgoing.headers['content-type'] ?? '');
  return { url: outgoing.url, body: Buffer.from(form ? pairs().join('&') : JSON.stringify(data)) };
}

/** The `jti` of a sandbox token in `Authorization` (the number of the "token #3" of the events). */
function tokenNumber(header: Record<string, unknown> | undefined): number | undefined {
  const value = Object.entries(header ?? {}).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
  const payload = typeof value === 'string' ? value.split('.')[1] : undefined;
  try {
    const claims = payload ? (JSON.parse(Buffer.from(payload, 'base64url').toString()) as { iss?: unknown; jti?: unknown }) : undefined;
    return claims?.iss === 'channel-sandbox' ? Number(claims.jti) : undefined;
  } catch {
    return undefined;
  }
}
