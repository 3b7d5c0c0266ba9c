// The seam between the platform-neutral core and an entry (src/index.ts, src/miniprogram.ts):
// what an entry supplies to createCoreClient. Its own file, so that the core's modules and the
// transports can name it without importing the client that uses it.
import type { TokenManagerOptions, TokenShare } from './token-lifecycle/token-types.js';
import type { SignalLike, Transport, UploadSpec } from './types.js';

/**
 * What a call is: `request()` and its helpers, `upload()` or `download()`, or `native`: a call
 * shaped as another stack's function (the browser entry's `client.fetch`, the mini-program
 * entry's `client.hostRequest`), whose every HTTP status resolves to the transport's own result.
 */
export type CallKind = 'request' | 'upload' | 'download' | 'native';

/** What an entry supplies to the platform-neutral core. */
export interface Platform {
  transport: Transport;
  /**
   * Ends what the fence of the calls under way cannot reach: the bodies callers read after their
   * call (clearToken(), another user). Names to `refuse` the caller's signal of each body it ended:
   * a later call given it is a stack's retry of that call, refused unsent.
   */
  fence?: (refuse: (given: SignalLike) => void) => void;
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
  /**
   * The global object, where the OpenTelemetry API registers its context manager; absent on the
   * mini-program entry (no globalThis there: each attempt's span then starts from the context
   * active as it is sent).
   */
  scope?: object;
  /** The entry's call shaped as its stack's own function (client.fetch, client.hostRequest). */
  native?: NativeCalls;
  /** The app shown or hidden (a host's onAppShow/onAppHide, a page's visibilitychange); absent where unknown. */
  visibility?: AppSignal & {
    /** The host fails the requests of a hidden app (mini-programs: WeChat's `request:fail interrupted`). */
    interrupts?: boolean;
  };
  /** The network up or down (a host's onNetworkStatusChange and getNetworkType, a page's online/offline); absent where unknown. */
  network?: AppSignal;
}

/** One of the platform's signals about the app's life or the network (app-state.ts follows them). */
export interface AppSignal {
  /**
   * Starts listening, once per client, at its first use: `report(true)` when the app is shown or
   * the network is up, `report(false)` when hidden or down; also reports the current state when
   * the platform can tell (at once, or later: a host's getNetworkType answers asynchronously).
   * Returns, when the current state comes later, a promise settled once it came (or never will):
   * until then the client sends nothing and asks no provider (an app launched offline).
   */
  watch(report: (on: boolean) => void): void | Promise<unknown>;
}

/** What a native call's arguments say, read by the entry (the core checks each value as for request()). */
export interface NativeOptions {
  /** A path, or a full URL under baseUrl. */
  url: string;
  method?: unknown;
  /** Names in any case; the core refuses Authorization. */
  headers?: Record<string, unknown>;
  /** Sent as it is on every attempt (fetch's BodyInit, a host's data); a promise is awaited once, inside the call. */
  body?: unknown;
  signal?: unknown;
  timeout?: unknown;
  /** Handed to the transport untouched: the caller's own fetch options and Request. */
  passOn?: Record<string, unknown>;
  /** The host's own request options (dataType, responseType...), checked against its list. */
  hostOptions?: Record<string, unknown>;
}

/** How an entry's native call reads its arguments, and the methods it adds to the client. */
export interface NativeShape {
  /** Reads the call's two arguments (fetch's input and init; a host request's options); throws ConfigError. */
  read(input: unknown, init: unknown): NativeOptions;
  /** The client's methods over `run`, which runs one native call and resolves to the transport's own result. */
  methods(run: (input: unknown, init?: unknown) => Promise<unknown>): object;
}

/** An entry's native call: its shape, and the platform's own transport for it. */
export interface NativeCalls extends NativeShape {
  /**
   * Sends a native call's attempts (fetch itself; the host's request() answering its own result):
   * every HTTP status resolves with the transport's own result as `value`, its body unread.
   */
  transport: Transport;
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
