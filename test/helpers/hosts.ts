/**
 * Emulated mini-program hosts: `wx.request`, `my.request` and the variants (tt, swan, qq,
 * uni, Taro), implemented over real node:http so that the transport meets a real server.
 * Each follows its host's documented semantics (shared/notes/miniprogram-hosts.md):
 * WeChat family gives HTTP errors in `success`; Alipay gives them in `fail` with
 * `error: 19` and reads only `headers` (older base libraries); Douyin and Baidu accept only
 * `dataType` 'json' or 'string'; WeChat fails beyond 10 concurrent requests. Quirks seen in
 * the field can be switched on per emulator.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { HostRequestOptions, HostResult } from '../../src/transports/miniprogram.js';

export type HostKind = 'wx' | 'my' | 'tt' | 'swan' | 'qq' | 'uni' | 'Taro';

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
  /** Concurrent requests beyond which the host fails (WeChat: 10). */
  maxConcurrent?: number;
}

export interface EmulatedHost {
  kind: HostKind;
  request: (options: HostRequestOptions) => unknown;
  /** Every options object the host received. */
  calls: HostRequestOptions[];
  /** Highest number of requests in flight at once. */
  maxSeen: number;
  /** The next request fails as the host reports a background interruption / a network error. */
  interruptNext(): void;
  failNextWith(result: HostResult): void;
  aborted: number;
}

const wxFamily = (kind: HostKind) => kind !== 'my';

export function createHost(kind: HostKind, quirks: HostQuirks = {}): EmulatedHost {
  let active = 0;
  let injected: HostResult | undefined;
  const max = quirks.maxConcurrent ?? (kind === 'wx' || kind === 'qq' ? 10 : Infinity);
  const host: EmulatedHost = {
    kind,
    calls: [],
    maxSeen: 0,
    aborted: 0,
    interruptNext: () => void (injected = kind === 'my' ? { error: 12, errorMessage: 'network interrupted' } : { errMsg: 'request:fail interrupted', errno: 600003 }),
    failNextWith: (result) => void (injected = result),
    request: (options) => {
      host.calls.push(options);
      let done = false;
      let onAbort: (() => void) | undefined;
      const deliver = (kindOf: 'success' | 'fail', result: HostResult) => {
        if (done) return;
        done = true;
        active--;
        if (quirks.neverCallBack) return;
        const first = kindOf === 'success' ? options.success : options.fail;
        const other = kindOf === 'success' ? options.fail : options.success;
        if (quirks.completeFirst) options.complete?.(result);
        first(result);
        if (!quirks.completeFirst) options.complete?.(result);
        if (quirks.doubleCallback) setTimeout(() => other(kindOf === 'success' ? { errMsg: 'request:fail late duplicate', error: 12 } : { ...result, statusCode: 200, status: 200, data: '{"code":0,"data":"duplicate"}' }), 0);
      };
      const fail = (wx: HostResult, my: HostResult) => deliver('fail', wxFamily(kind) ? wx : my);

      active++;
      host.maxSeen = Math.max(host.maxSeen, active);
      const task = {
        abort: () => {
          host.aborted++;
          onAbort?.();
          fail({ errMsg: 'request:fail abort', errno: 1 }, { error: 9, errorMessage: 'request:fail abort' });
        },
      };
      const headersIn = wxFamily(kind) ? options.header : options.headers; // Alipay (older) reads only `headers`
      const dataType = options.dataType ?? 'json';
      setTimeout(() => {
        if (done) return;
        if (active > max) return fail({ errMsg: 'request:fail exceed max task count', errno: 600000 }, { error: 20, errorMessage: 'throttled' });
        if ((kind === 'tt' || kind === 'swan') && dataType !== 'json' && dataType !== 'string') {
          return fail({ errMsg: `request:fail invalid dataType ${dataType}`, errno: 2 }, {});
        }
        if (injected) {
          const result = injected;
          injected = undefined;
          return deliver('fail', result);
        }
        const origin = options.url.replace(/^(https?:\/\/[^/]+).*$/, '$1');
        if (quirks.allowedOrigins && quirks.allowedOrigins.indexOf(origin) < 0) {
          return fail({ errMsg: `request:fail url not in domain list`, errno: 600002 }, { error: 11, errorMessage: 'domain not allowed' });
        }
        const url = new URL(options.url);
        const body = options.data;
        const req = httpRequest(
          { hostname: url.hostname, port: url.port, path: url.pathname + url.search, method: options.method ?? 'GET', headers: { 'content-type': 'application/json', ...headersIn } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              const status = res.statusCode ?? 0;
              let data: unknown = text;
              if (dataType === 'json') {
                try {
                  data = JSON.parse(text);
                } catch {
                  if (kind === 'my') return deliver('fail', { error: 14, errorMessage: 'JSON parse error', status });
                  // WeChat keeps the string when JSON.parse fails
                }
              }
              const headers = shapeHeaders(res.headers, res.rawHeaders, quirks.headerShape ?? (kind === 'my' ? 'lower' : 'mixed'));
              if (kind === 'my') {
                if (status >= 400) return deliver('fail', { error: 19, errorMessage: 'http status error', status, data, headers });
                return deliver('success', { status, data, headers });
              }
              const result = { statusCode: status, data, header: headers, errMsg: 'request:ok' };
              if ((quirks.http401InFail && status === 401) || (quirks.httpErrorsInFail && status >= 400)) {
                return deliver('fail', { ...result, errMsg: 'request:fail http status error' });
              }
              deliver('success', result);
            });
          },
        );
        onAbort = () => req.destroy();
        const timeout = options.timeout ?? (kind === 'my' ? 30000 : 60000);
        req.setTimeout(timeout, () => {
          req.destroy();
          fail({ errMsg: 'request:fail timeout', errno: 5 }, { error: 13, errorMessage: 'request:fail timeout' });
        });
        req.on('error', (error: NodeJS.ErrnoException) => {
          fail({ errMsg: `request:fail ${error.code ?? error.message}`, errno: 600001 }, { error: 12, errorMessage: 'network error' });
        });
        if (body !== undefined && options.method !== 'GET') req.write(body);
        req.end();
      }, 0);
      if (kind === 'Taro') {
        // Taro.request returns a Promise with .abort and also calls the callbacks.
        const promise = new Promise((resolve, reject) => {
          const { success, fail: failCb } = options;
          options.success = (r) => (success(r), resolve(r));
          options.fail = (r) => (failCb(r), reject(r));
        });
        return Object.assign(promise, task);
      }
      return task;
    },
  };
  return host;
}

function shapeHeaders(headers: IncomingHttpHeaders, raw: string[], shape: 'lower' | 'mixed' | 'array'): HostResult['header'] {
  if (shape === 'lower') return { ...headers } as Record<string, unknown>;
  const mixed: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
    mixed[name] = raw[i + 1];
  }
  if (shape === 'mixed') return mixed;
  return Object.keys(mixed).map((key) => ({ [key]: mixed[key] }));
}
