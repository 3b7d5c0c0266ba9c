// The seam between the platform-neutral core and an entry (src/index.ts, src/miniprogram.ts):
// what an entry supplies to createCoreClient. Its own file, so that the core's modules and the
// transports can name it without importing the client that uses it.
import type { TokenManagerOptions, TokenShare } from './token-types.js';
import type { Transport, UploadSpec } from './types.js';

/** What a call is: `request()` and its helpers, `upload()` or `download()`. */
export type CallKind = 'request' | 'upload' | 'download';

/** What an entry supplies to the platform-neutral core. */
export interface Platform {
  transport: Transport;
  /** For the `signal` handed to tokenProvider; omitted where the host has no AbortController. */
  createAbortController?: TokenManagerOptions['createAbortController'];
  /** Shares the token with other clients (the browser entry's crossTab), given the checked options. */
  share?: (config: { base: string; tokenTimeout: number }) => TokenShare | undefined;
  /** How an upload names its file: a host file path (mini-programs) or a Blob (browsers). */
  files: FileSource;
  /**
   * Checks a call's `hostOptions` against the host's list for that kind of call and merges the
   * client's own; absent where there are none (the option is then unknown).
   */
  hostOptions?: (kind: CallKind, value: unknown) => Record<string, unknown> | undefined;
}

/** An entry's way of naming an upload's file, and the options that adds to upload and download. */
export interface FileSource {
  /** Option names upload (then download) takes besides the shared ones, e.g. `['filePath']`. */
  upload: string[];
  download: string[];
  /** Other libraries' names for those options, for "did you mean" (keys lower-case). */
  hints: Record<string, string>;
  /** The file of an upload's options, checked (a ConfigError naming the fix otherwise). */
  take(o: Record<string, unknown>): Pick<UploadSpec, 'filePath' | 'blob' | 'fileName'>;
}
