// What the mini-program hosts' request(), uploadFile() and downloadFile() take and hand back.

/** The options object every host's `request()` accepts (WeChat and Alipay shapes together). */
export interface HostRequestOptions {
  url: string;
  method: string;
  /** WeChat family. */
  header: Record<string, string>;
  /** Alipay (older base libraries read only this one). */
  headers: Record<string, string>;
  /** A string; for `client.hostRequest`, its caller's data (an object, a string, an ArrayBuffer) as given. */
  data?: unknown;
  /** The SDK asks for text; `client.hostRequest` leaves the host's default (json) unless its caller names one. */
  dataType?: string;
  /** `'text'`, or `'arraybuffer'` when asked for through hostOptions. */
  responseType?: string;
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
export interface HostTask {
  abort?: () => void;
  onProgressUpdate?: (listener: (update: HostProgress) => void) => void;
  /** A request task's response headers (WeChat 2.1.0+). */
  onHeadersReceived?: (listener: (result: HostResult) => void) => void;
  /** A request task's body chunks with `enableChunked` (WeChat 2.20.1+). */
  onChunkReceived?: (listener: (result: HostResult) => void) => void;
  then?: unknown;
  catch?: (f: () => void) => unknown;
}

/** A task's progress update: upload counts sent bytes, download written ones (Alipay's upload too). */
export interface HostProgress {
  progress?: number;
  totalBytesSent?: number;
  totalBytesExpectedToSend?: number;
  totalBytesWritten?: number;
  totalBytesExpectedToWrite?: number;
}
