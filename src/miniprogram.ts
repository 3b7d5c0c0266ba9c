/**
 * channel-sdk for mini-programs (WeChat, Alipay, Douyin, Baidu, QQ, uni-app, Taro): the same
 * `createClient` as the browser entry, over the host's `request()`. No fetch, no ky.
 * @packageDocumentation
 */
import { createCoreClient, type BaseClient } from './core/client.js';
import type { CoreClientOptions, FileCallOptions, UploadFields } from './core/types.js';
import { describeValue, fail } from './shared/check.js';
import { hostOptionsFor } from './transports/miniprogram/host-options.js';
import { HOST_METHODS, resolveHostFunctions } from './transports/miniprogram/host-functions.js';
import type { HostDownloadFile, HostRequest, HostUploadFile } from './transports/miniprogram/host-api.js';
import { createMiniProgramTransports } from './transports/miniprogram/host-transport.js';
import { hostRequestCalls, type HostRequestCall, type HostRequestTask } from './transports/miniprogram/host-request.js';
import { hostSignals } from './transports/miniprogram/host-signals.js';

/** Options of the host's own functions, passed as they are; see README "Host options". */
export type HostOptions = Record<string, unknown>;

/** Options of the mini-program `createClient`. */
export interface MiniProgramClientOptions extends CoreClientOptions {
  /**
   * The host's request function, e.g. `wx.request`, `my.request`, `uni.request`, `Taro.request`.
   * @default the first of wx, my, tt, swan, qq, uni, Taro found
   */
  request?: HostRequest;
  /** The host's uploadFile, e.g. `uni.uploadFile`. @default the one of the host `request` belongs to, else the first found */
  uploadFile?: HostUploadFile;
  /** The host's downloadFile, e.g. `Taro.downloadFile`. @default as for uploadFile */
  downloadFile?: HostDownloadFile;
  /**
   * The host's limit on calls at once (WeChat allows 10 requests, 10 uploads, 10 downloads): more
   * wait in the SDK's queue. The SDK's own requests use one slot fewer, so that a tokenProvider's
   * `wx.request` to your token route never waits behind them. @default 10
   */
  concurrency?: number;
  /**
   * The host's own options for every call that takes them (`enableHttp2`, `enableQuic`,
   * `enableCache`, `dataType`...), checked against the host's list: an unknown key is a
   * ConfigError with "did you mean". A call's own `hostOptions` are added to these.
   * @example hostOptions: { enableHttp2: true, enableQuic: true }
   */
  hostOptions?: HostOptions;
}

/** What the mini-program entry adds to every request's options. */
export interface MiniProgramRequestExtra {
  /** The host's own options for this call, added to the client's `hostOptions`. */
  hostOptions?: HostOptions;
}

/** Options of `client.upload()` on a mini-program. */
export interface UploadOptions<T = unknown> extends UploadFields<T> {
  /** The local file, e.g. a `tempFilePath` from `wx.chooseMedia`. Required. */
  filePath: string;
  /** The host's own uploadFile options (Alipay's `fileType`, `enableHttp2`...). */
  hostOptions?: HostOptions;
}

/** Options of `client.download()` on a mini-program. */
export interface DownloadOptions extends FileCallOptions {
  /** Where the host saves the file (a user-data path); a temp file when absent. */
  filePath?: string;
  /** The host's own downloadFile options. */
  hostOptions?: HostOptions;
}

/** What `client.download()` resolves to: only ever a 2xx, never a 401 or 5xx body. */
export interface DownloadResult {
  /** The downloaded file (Alipay before base library 2.7.23: its `apFilePath`). */
  tempFilePath: string;
  /** The `filePath` you passed, when you passed one. */
  filePath?: string;
  statusCode: number;
}

/** A mini-program client: the browser entry's methods, and files over the host's uploadFile/downloadFile. */
export interface Client extends BaseClient<MiniProgramRequestExtra> {
  /**
   * Uploads a local file as multipart with the token (the host's `uploadFile`); a 401 refreshes
   * once and sends the file once more. Resolves to the envelope's `data`.
   * @example
   * const { url } = await client.upload<{ url: string }>('/open/api/v1/sdk/photos', { filePath: tempFilePath, name: 'file', onProgress: ({ percent }) => {} });
   */
  upload<T = unknown>(path: string, options: UploadOptions<T>): Promise<T>;
  /**
   * Downloads with the token (the host's `downloadFile`); a 401 refreshes once and asks once
   * more; any other non-2xx is an `HttpError`, never a file.
   */
  download(path: string, options?: DownloadOptions): Promise<DownloadResult>;
  /**
   * `wx.request` with the token, for a stack of your own (alova, luch-request, uni-app or Taro
   * code written against `request()`): the same options, callbacks and task. Every attempt
   * carries the token; a 401 refreshes once (shared with every other call) and sends the request
   * once more; `abort()` and clearToken() stop it at any stage; it waits in the client's queue
   * like every call. Otherwise it is the host's: every HTTP status arrives in `success` (on
   * Alipay too), `data` parsed by `dataType`, and no retries of its own (see `isRetryable`). A URL
   * outside baseUrl is refused (`fail`) and nothing is sent.
   * @example
   * client.hostRequest({ url: '/open/api/v1/sdk/orders', success: (r) => console.log(r.statusCode, r.data) });
   */
  hostRequest<T = unknown>(options: HostRequestCall<T>): HostRequestTask<T>;
}

/**
 * Creates a client over the mini-program host's `request()`; options, behaviour, events and
 * errors are those of the browser entry.
 * @example
 * const client = createClient({
 *   baseUrl: 'https://api.example.com',
 *   tokenProvider: ({ forceRefresh, rejected }) => new Promise((resolve, reject) => wx.request({
 *     url: 'https://partner.example.com/channel-token' + (forceRefresh ? '?force=1&rejected=' + (rejected || '') : ''),
 *     success: (r) => resolve(r.data.access_token), fail: reject,
 *   })),
 * });
 */
export function createClient(options: MiniProgramClientOptions): Client {
  const o = options || ({} as MiniProgramClientOptions);
  const host = resolveHostFunctions(o);
  const { concurrency = 10 } = o;
  if (!(concurrency >= 1 && concurrency % 1 === 0)) fail('concurrency must be a whole number >= 1 (WeChat allows 10 requests at once)');
  const signals = hostSignals(host.host);
  const transports = createMiniProgramTransports({
    request: host.request,
    uploadFile: host.uploadFile,
    downloadFile: host.downloadFile,
    // Alipay (and DingTalk) take the field name as fileName and require fileType, whichever
    // wrapper (uni, Taro) hands the upload to my.uploadFile.
    alipay: host.alipay,
    // Douyin and Baidu only know 'string' for a raw body; the others take 'text'.
    dataType: host.name === 'tt' || host.name === 'swan' ? 'string' : 'text',
    concurrency,
    removeFile: host.removeFile,
  });
  return createCoreClient(
    o,
    {
      transport: transports.transport,
      files: {
        upload: ['filePath'],
        download: ['filePath'],
        hints: { file: 'filePath', filename: 'name', path: 'filePath', url: 'filePath' },
        take: (u) => ({
          filePath:
            typeof u.filePath === 'string' && u.filePath
              ? u.filePath
              : fail('filePath must be the local path of the file, e.g. the tempFilePath of chooseMedia; got ' + describeValue(u.filePath)),
        }),
      },
      hostOptions: hostOptionsFor(host.name, o.hostOptions),
      native: Object.assign({ transport: transports.native }, hostRequestCalls),
      // Its onAppShow/onAppHide and network functions, found on the host of its request().
      visibility: signals.visibility,
      network: signals.network,
    },
    HOST_METHODS.concat('concurrency', 'hostOptions'),
  ) as Client;
}

export type {
  HostDownloadFile,
  HostDownloadOptions,
  HostHeaders,
  HostRequest,
  HostRequestOptions,
  HostResult,
  HostUploadFile,
  HostUploadOptions,
} from './transports/miniprogram/host-api.js';
export type { HostRequestCall, HostRequestError, HostRequestResult, HostRequestTask } from './transports/miniprogram/host-request.js';
export { hostTokenStore } from './tokens/host-store.js';
export type { HostStorage, HostTokenStoreOptions } from './tokens/host-store.js';
export * from './client-exports.js';
