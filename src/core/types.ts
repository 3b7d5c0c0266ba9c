import type { SignalLike } from '../shared/signal.js';
import type { ClientTelemetryPlugin } from './telemetry-hooks.js';
import type { StandardSchemaV1 } from './standard-schema.js';
import type { BeforeSend } from './requests/send-attempt.js';
import type { TokenStore } from './token-lifecycle/token-store-types.js';
import type { OfflineOptions, RetryBudgetOptions } from './app-life/pacing-types.js';

export type { StoredToken, TokenStore } from './token-lifecycle/token-store-types.js';
export type { OfflineOptions, RetryBudgetOptions } from './app-life/pacing-types.js';

export type { SignalLike };

/** What a transport is asked to send. Headers are lower-case; the body is already serialised. */
export interface TransportRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** A string, or a native call's body as its caller gave it (fetch's BodyInit, a host's data). */
  body?: unknown;
  /** Milliseconds this attempt may take; the transport rejects with `TimeoutError` after it. */
  timeout: number;
  /**
   * Fires when the request is cancelled (its caller's signal) or fenced (clearToken()). An
   * attempt not yet started (queued) must then never start.
   */
  signal?: SignalLike;
  /**
   * `false` when only a clearToken() fence can fire `signal`: an attempt already on the wire
   * may then finish on its own (the caller stops waiting regardless), which spares a
   * transport whose cancellation costs (ky's signal plumbing). Otherwise drop it. @default true
   */
  dropOnAbort?: boolean;
  /** A file call (`client.upload()` / `client.download()`): what to send or where to write. */
  file?: FileSpec;
  /** Transfer progress of a file call, already made non-decreasing by the core. */
  onProgress?: (progress: Progress) => void;
  /** Mini-program entry: options passed to the host's function as they are, checked per host. */
  hostOptions?: Record<string, unknown>;
  /** The caller asked for `raw: true` (a download then resolves to the transport's own object). */
  raw?: boolean;
  /** A native call's own options, passed on untouched (fetch: the Request and the other RequestInit keys). */
  passOn?: Record<string, unknown>;
  /**
   * For a transport that queues attempts (a host's concurrency limit): called as a queued attempt
   * leaves, before it is sent. Puts the token the client holds then into `headers`, first
   * replacing one that ended meanwhile (it may wait for the provider); rejects as the request would.
   */
  rebind?: () => Promise<void> | void;
}

/** An upload: the file and its multipart form. */
export interface UploadSpec {
  kind: 'upload';
  /** The multipart field name of the file. */
  name: string;
  /** Mini-program entry: the host's local file path. */
  filePath?: string;
  /** Browser entry: the Blob or File to send. */
  blob?: BlobLike;
  /** Browser entry: the file name sent with a Blob. */
  fileName?: string;
  /** Other multipart fields. */
  formData: Record<string, string>;
}

/** A download; `filePath` (mini-program entry) is where the host saves it. */
export interface DownloadSpec {
  kind: 'download';
  filePath?: string;
}

export type FileSpec = UploadSpec | DownloadSpec;

/** The part of a `Blob` the SDK reads (declared here: the core type-checks without the DOM lib). */
export interface BlobLike {
  readonly size: number;
  readonly type: string;
}

/** Transfer progress, in ky's shape on every entry. */
export interface Progress {
  /** 0 to 1; never decreases within one call, and is 1 when the call resolves. */
  percent: number;
  transferredBytes: number;
  /** 0 when the host does not know the size. */
  totalBytes: number;
}

/** A response as the core reads it: any status, the body as text. */
export interface TransportResponse {
  status: number;
  /** Case-insensitive lookup; a fetch `Headers` fits as it is. */
  headers: { get(name: string): string | null | undefined };
  body: string;
  /**
   * What a 2xx resolves to instead of the parsed body: a download's file (the mini-program
   * host's `{ tempFilePath, filePath, statusCode }`, the browser's Blob or Response), or the
   * bytes of `responseType: 'arraybuffer'` with `raw: true`. Non-2xx answers carry the body.
   * A native call's result, whatever the status.
   */
  value?: unknown;
  /** Lets go of a response the call will not resolve to (a 401 before the replay): a native call's body is unread. */
  discard?: () => void;
}

/**
 * Sends one HTTP request. Resolves for every HTTP status; rejects only with
 * `NetworkError`, `TimeoutError` or `AbortError` (anything else is treated as a network error).
 */
export type Transport = (request: TransportRequest) => Promise<TransportResponse>;

/**
 * The runtime's own `AbortSignal` type where its typings have one (the DOM lib, @types/node), else
 * {@link SignalLike}: the core type-checks without the DOM lib (mini-program build), and the
 * shipped types augment no global of the user's.
 */
// oxlint-disable-next-line no-restricted-globals -- a type query, nothing at run time
export type RuntimeAbortSignal = typeof globalThis extends { AbortSignal: { prototype: infer S } } ? S : SignalLike;

/** What `tokenProvider` receives. */
export interface TokenProviderContext {
  /**
   * True after a 401 and for the refresh ahead of expiry: bypass any cache of your own and
   * fetch a new token from your backend (the service keeps older tokens valid until they
   * expire, so a cached one may be the very token that was just rejected).
   */
  forceRefresh: boolean;
  /**
   * Aborted when `tokenTimeout` passes. A real `AbortSignal` where the runtime has
   * `AbortController` (browsers, Node); absent on mini-program hosts.
   */
  signal?: RuntimeAbortSignal;
  /**
   * With `forceRefresh`: a fingerprint of the token being replaced (the one a 401 just rejected),
   * never the token itself. Pass it on to your token route (`?force=1&rejected=...`, or
   * `rejected` in a JSON body): `createTokenRoute` then never answers with that very token.
   */
  rejected?: string;
}

/**
 * Returns the user JWT: `access_token` from the token endpoint, the string itself,
 * without `Bearer `. Usually calls your own backend, which calls the service.
 */
export type TokenProvider = (context: TokenProviderContext) => Promise<string> | string;

/** Transient-failure retry policy. */
export interface RetryOptions {
  /** Retries after the first attempt. @default 2 */
  limit?: number;
  /** Methods that may be retried (idempotent only, as a rule). @default ['GET','HEAD','PUT','DELETE','OPTIONS'] */
  methods?: string[];
  /** Statuses treated as transient. @default [408, 429, 500, 502, 503, 504] */
  statusCodes?: number[];
  /** Delay before retry number `n` (1-based), in ms. @default n => 300 * 2 ** (n - 1), capped at 10 s, with jitter */
  delay?: (retry: number) => number;
  /** Longest `Retry-After` honoured, in ms; a longer one ends the retries. @default 60000 */
  maxRetryAfter?: number;
}

/** Query parameters; `undefined` values are left out, arrays repeat the key. */
export type SearchParams = string | Record<string, string | number | boolean | null | undefined | ReadonlyArray<string | number | boolean>>;

/**
 * Headers as an object of names to values, or anything read by its entries the way a `Headers`
 * object or a `Map` is (typed by `forEach`, so the mini-program types need no DOM).
 */
export type HeadersInput = Record<string, string> | { forEach(callback: (value: string, key: string) => void): void };

/** Options of one request. */
export interface RequestOptions<T = unknown> {
  /** @default 'GET' */
  method?: string;
  /** Extra headers for this request (an object, a `Headers` or a `Map`). `Authorization` is the SDK's own and may not be set. */
  headers?: HeadersInput;
  /** Query parameters appended to the path. */
  searchParams?: SearchParams;
  /** A value sent as JSON (sets `content-type: application/json`). */
  json?: unknown;
  /** A body sent as it is; use `json` for JSON. */
  body?: string;
  /** Validates `data` (any Standard Schema, e.g. zod); failure gives `ResponseError` listing the issues. */
  schema?: StandardSchemaV1<unknown, T>;
  /** Resolve to the parsed JSON body as it came, without the `{ code, data }` envelope check. @default false */
  raw?: boolean;
  /** Cancels the request at any stage, including while it waits for a token. */
  signal?: SignalLike;
  /** Milliseconds per attempt; overrides the client's `timeout`. */
  timeout?: number;
  /** Overrides the client's `retry` for this request. */
  retry?: number | RetryOptions;
  /** While offline, wait up to `wait` ms for the network (`0`: fail at once), whatever the method; overrides the client's `offline`. */
  offline?: Pick<OfflineOptions, 'wait'>;
}

/** Options every file call takes, on both entries. */
export interface FileCallOptions {
  /** Extra headers (an object, a `Headers` or a `Map`). `Authorization` is the SDK's own and may not be set. */
  headers?: HeadersInput;
  /** Query parameters appended to the path. */
  searchParams?: SearchParams;
  /** Cancels the transfer at any stage (the host task's `abort()`, or the fetch). */
  signal?: SignalLike;
  /** Milliseconds per attempt, the whole transfer included; overrides the client's `timeout`. */
  timeout?: number;
  /**
   * Transfer progress in ky's shape `{ percent, transferredBytes, totalBytes }`: percent never
   * decreases (a replay after a 401 does not send it back to 0) and is 1 when the call resolves.
   */
  onProgress?: (progress: Progress) => void;
  /** While offline, wait up to `wait` ms for the network before sending (`0`: fail at once); overrides the client's `offline`. */
  offline?: Pick<OfflineOptions, 'wait'>;
}

/** What `upload` takes besides the file itself, on both entries. */
export interface UploadFields<T = unknown> extends FileCallOptions {
  /** The multipart field name the server reads the file from. Required. */
  name: string;
  /** Other multipart fields; numbers and booleans are sent as strings. */
  formData?: Record<string, string | number | boolean>;
  /** Validates the envelope's `data` (any Standard Schema). */
  schema?: StandardSchemaV1<unknown, T>;
  /** Resolve to the parsed JSON body as it came, without the envelope check. @default false */
  raw?: boolean;
}

/** Options of one request made through a method helper (`get`, `post`, ...). */
export type MethodOptions<T = unknown> = Omit<RequestOptions<T>, 'method'>;

/** Options shared by both client entries. */
export interface CoreClientOptions {
  /** Absolute http(s) URL that request paths are resolved against. Required. */
  baseUrl: string;
  /** Returns the access_token string. Required. See {@link TokenProvider}. */
  tokenProvider: TokenProvider;
  /** Milliseconds per attempt. @default 10000 */
  timeout?: number;
  /** Milliseconds `tokenProvider` may take before `TokenProviderError`. @default 10000 */
  tokenTimeout?: number;
  /**
   * Seconds before expiry to refresh ahead (never more than half the token's lifetime);
   * `0` turns expiry tracking off, so tokens are refreshed only on 401. @default 60
   */
  refreshLeeway?: number;
  /** Headers sent with every request (an object, a `Headers` or a `Map`). `Authorization` is the SDK's own and may not be set. */
  headers?: HeadersInput;
  /** Transient-failure retries: a number (the limit) or {@link RetryOptions}. @default 2 */
  retry?: number | RetryOptions;
  /** Clock in epoch ms, for tests. @default Date.now */
  now?: () => number;
  /**
   * Keeps the token through a relaunch, e.g. `hostTokenStore({ key: () => app.globalData.userId })`
   * on a mini-program, so a cold start within its lifetime asks the provider nothing. Opt-in.
   */
  tokenStore?: TokenStore;
  /**
   * Identical GETs in flight (same URL with its query, same headers, timeout, retry and `raw`)
   * share one network call: alova's default, opt-in here. Each caller keeps its own `signal` (one
   * caller's abort never cancels the others) and `schema`; a 401 on the shared call follows the
   * one-refresh rule once for all of them. A GET never joins one that started before a write of
   * this client (any method but GET, HEAD, OPTIONS) had ended: a read after a write sees it. @default false
   */
  dedupeGets?: boolean;
  /**
   * Runs before every attempt is sent, again on the replay after a 401 and on each retry: sign
   * the request, encrypt its body, add trace headers. It never sees `Authorization` and cannot
   * set it.
   * @example beforeSend: async (attempt) => { attempt.headers['x-sign'] = await sign(attempt.method, attempt.url, attempt.body); }
   */
  beforeSend?: BeforeSend;
  /**
   * OpenTelemetry, as a plug-in: a CLIENT span per attempt (with a `traceparent` header), a span
   * per tokenProvider call, and token metrics. Nothing is created without it, and an app that
   * does not import `channel-sdk/telemetry` carries none of its code.
   * @example
   * import { clientTelemetry } from 'channel-sdk/telemetry';
   * createClient({ baseUrl, tokenProvider, telemetry: clientTelemetry({ tracer: trace.getTracer('channel-sdk'), meter: metrics.getMeter('channel-sdk') }) });
   */
  telemetry?: ClientTelemetryPlugin;
  /**
   * What calls do while the host reports no network (see {@link OfflineOptions}); `false`: the
   * network is not followed (calls go as they did before, failing by the retry rules), for a
   * machine whose report is wrong: Chromium where loopback is the only link (a container, a CI
   * job) says `navigator.onLine` false while a service on 127.0.0.1 answers. @default { wait: 30000 }
   */
  offline?: OfflineOptions | false;
  /** The client's retry budget (see {@link RetryBudgetOptions}); `false`: none. @default { max: 10, ratio: 0.1 } */
  retryBudget?: RetryBudgetOptions | false;
}

/**
 * Why a token was installed: asked of the provider (`initial`, `expired`, `proactive`,
 * `unauthorized`, `manual`), read back from `tokenStore` after a relaunch (`stored`), or
 * obtained by another tab of a `crossTab` group (`shared`).
 */
export type TokenReason = 'initial' | 'expired' | 'proactive' | 'unauthorized' | 'manual' | 'stored' | 'shared';
