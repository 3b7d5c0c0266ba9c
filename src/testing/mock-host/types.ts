import type { FailNextOptions, SandboxEvent, TokenVerdict } from '../sandbox/types.js';
import type { MockHostKind } from './host-answers.js';
import type { HostLifeFunctions } from './host-life.js';

export type { MockHostKind } from './host-answers.js';

/** A call as a route handler sees it. */
export interface MockRequest {
  /** The host function that carried it. */
  api: 'request' | 'uploadFile' | 'downloadFile';
  /** Upper case (`uploadFile` is a POST, `downloadFile` a GET). */
  method: string;
  /** The URL as the page gave it, query included. */
  url: string;
  /** `https://partner.example.com`. */
  origin: string;
  /** `/channel-token`. */
  path: string;
  /** The query string's values (the last of each name). */
  query: Record<string, string>;
  /** The `:name` segments of the route that matched. */
  params: Record<string, string>;
  /** The request headers, names in lower case. */
  headers: Record<string, string>;
  /** The body as a server would receive it (an object `data` serialised as the host does). */
  body: string;
  /** The body parsed, when it is JSON. */
  json: unknown;
  /** An upload's file (read from the mock's file system) and its `formData`. */
  file?: { field: string; fileName: string; bytes: Uint8Array; formData: Record<string, string> };
}

/** A route handler's answer: a JSON object, a string or bytes as the body. */
export interface MockAnswer {
  /** @default 200 */
  status?: number;
  headers?: Record<string, string>;
  /** An object or array is sent as JSON, a string as text, a Uint8Array or ArrayBuffer as bytes. */
  body?: unknown;
}

/** Answers one route; may be async (the call stays in flight until it resolves). */
export type MockRoute = (request: MockRequest) => MockAnswer | Promise<MockAnswer>;

/** Options of {@link createMockHost}; an unknown key is a ConfigError with "did you mean". */
export interface MockHostOptions {
  /**
   * Which host it stands in for: its callback shapes (Alipay `my`: `status`/`headers`, HTTP
   * errors in `fail` with `error: 19`; the others WeChat's), its storage arguments (`my`:
   * `{ key, data }`) and its limit of calls in flight. `Taro` also returns Promises.
   * @default 'wx'
   */
  kind?: MockHostKind;
  /**
   * The service's answers, checked like the sandbox's data routes before the handler runs: a
   * call without a valid Bearer token this host issued (or after `expireTokens()`, or one of
   * `failNext(n)`) gets 401 instead. Keys: `'GET /open/api/v1/sdk/orders'` (any origin),
   * `'POST https://api.example.com/v1/orders/:id'` (that origin), `'/path'` (any method).
   * They come before the sandbox's own data routes, which answer too unless `sandboxData: false`.
   * @example service: { 'GET /open/api/v1/sdk/orders': () => ({ body: { code: 0, data: { orders: [] } } }) }
   */
  service?: Record<string, MockRoute>;
  /**
   * Any other server the page calls (your backend, a CDN): answered by the handler as it is, no
   * token checked. Same keys as `service`; checked first.
   */
  routes?: Record<string, MockRoute>;
  /** The sandbox's own data routes (`SANDBOX_PATHS`: orders, logistics, echo, photos, invoices) on any origin. @default true */
  sandboxData?: boolean;
  /**
   * Your backend's token route, as `createTokenRoute` answers it: `GET` (or a POST with
   * `{"forceRefresh":true}`) → `{ access_token, token_type, expires_in }`; a cached token
   * until it ends, a new one with `?force=1`; 401 while `user` is null. A path (any origin)
   * or a full URL; `false` for none.
   * @default '/channel-token'
   */
  tokenRoute?: string | false;
  /** Who the token route signs in (the `sub` of its tokens); null: nobody (401). Changeable later as `host.user`. @default 'user-1' */
  user?: string | null;
  /** Lifetime of the tokens it issues, seconds. @default 900 */
  tokenTtlSeconds?: number;
  /** The service's clock, epoch ms: token expiry and the `Date` header. @default Date.now */
  now?: () => number;
  /**
   * Calls of each API (request, uploadFile, downloadFile) in flight at once; one more fails as
   * the host does (WeChat: `request:fail exceed max task count`, errno 600000).
   * @default 10 for wx and qq, unlimited for the others
   */
  maxConcurrent?: number;
  /** Origins the host may call (its domain allow-list); others fail with `url not in domain list`. @default any */
  allowedOrigins?: string[];
  /** Storage to start from and share, e.g. across two launches of the page. @default a new Map */
  storage?: Map<string, unknown>;
  /** Files to start from and share: path → bytes (what `uploadFile` reads, `downloadFile` writes). @default a new Map */
  files?: Map<string, Uint8Array>;
  /**
   * Origins whose calls go over real HTTP (node:http, node:https), e.g. a running sandbox and your
   * backend: `['http://127.0.0.1:8787', 'http://127.0.0.1:3000']`. The host's own rules still apply
   * (its callback shapes, errMsg, status in `success`, header case, the limit of calls in flight,
   * `allowedOrigins`, abort and timeout, which drop the connection); `request` sends WeChat's default
   * `content-type: application/json`, `uploadFile` the file as multipart/form-data from `files`,
   * `downloadFile` writes the answer into `files`. Your `routes` still come first; the token route,
   * `service` and the sandbox's data in this process answer only the other origins. A refused
   * connection fails the call as the host does (`request:fail ECONNREFUSED …`), and is said once
   * per origin on stderr, with what to start. The sandbox's own counters are the sandbox's
   * (`channel-sandbox stats`); `host.stats` counts the calls, and the token route's answers at
   * these origins too.
   * @default none: every call is answered in this process
   */
  passThrough?: string[];
}

/** One call the host received, in order. */
export interface MockCall {
  api: 'request' | 'uploadFile' | 'downloadFile';
  method: string;
  url: string;
  /** The HTTP status answered, or why the call failed (`abort`, `timeout`, `throttled`...). */
  status?: number;
  failure?: string;
  /** The number of the token the call carried, when it was one this host issued (1, 2… in issue order). */
  token?: number;
}

/** Counters since the host was made. */
export interface MockHostStats {
  /** `request`, `uploadFile`, `downloadFile` calls. */
  requests: number;
  uploads: number;
  downloads: number;
  /** Token-route answers with a token, and those asked with `?force=1` (or `forceRefresh`). */
  tokenRouteCalls: number;
  forcedRefreshes: number;
  /** Tokens issued (by the token route or `issueToken`). */
  tokensIssued: number;
  /** Calls to the service's routes, and those answered 401. */
  dataCalls: number;
  unauthorized: number;
  /** Most calls of one API in flight at once. */
  maxInFlight: number;
}

/** A file system as the host's `getFileSystemManager()` gives it, on the mock's in-memory files. */
export interface MockFileSystem {
  readFileSync(filePath: string, encoding?: string): string | ArrayBuffer;
  writeFileSync(filePath: string, data: string | ArrayBuffer | Uint8Array, encoding?: string): void;
  unlinkSync(filePath: string): void;
  unlink(options: { filePath: string; success?(r: object): void; fail?(r: object): void; complete?(r: object): void }): void;
  accessSync(path: string): void;
  access(options: { path: string; success?(r: object): void; fail?(r: object): void; complete?(r: object): void }): void;
}

/**
 * What {@link createMockHost} returns: the host's functions (its app-life and network functions
 * too: onAppShow, onAppHide, onNetworkStatusChange, getNetworkType...), and the controls of a test.
 */
export interface MockHost extends HostLifeFunctions {
  readonly kind: MockHostKind;
  /** The host's `request()`: pass it as `request` to `createClient`, or install the host as the global. */
  request(options: object): unknown;
  uploadFile(options: object): unknown;
  downloadFile(options: object): unknown;
  /** Storage in the host's shape: WeChat `(key, data)`, Alipay `({ key, data })`; values kept as JSON copies. */
  getStorageSync(key: unknown): unknown;
  setStorageSync(key: unknown, data?: unknown): void;
  removeStorageSync(key: unknown): void;
  clearStorageSync(): void;
  getStorage(options: object): unknown;
  setStorage(options: object): unknown;
  removeStorage(options: object): unknown;
  getFileSystemManager(): MockFileSystem;
  /** Sets `globalThis[kind]` (e.g. `wx`) to this host; returns the function that puts back what was there. */
  install(): () => void;

  /** The app goes to the background: onAppHide's listeners run. Calls in flight go on until {@link interrupt}. */
  hide(): void;
  /** The app comes back to the foreground: onAppShow's listeners run (with the host's show payload). */
  show(): void;
  /**
   * The network comes or goes: onNetworkStatusChange's listeners run with the host's payload,
   * getNetworkType answers `none` (Alipay: `NOTREACHABLE`), the calls in flight fail as on a
   * network change, and every call made while it is down fails (`request:fail -106:net::ERR_INTERNET_DISCONNECTED`).
   */
  setNetwork(state: { isConnected: boolean }): void;
  /**
   * Fails every call in flight as WeChat does to a hidden app's after 5 s: `request:fail
   * interrupted` (errno 600003; Alipay: error 12).
   */
  interrupt(): void;
  /** Whether the app is in the foreground (after hide(): false), and whether the network is up. */
  readonly visible: boolean;
  readonly isConnected: boolean;

  /** Every token issued so far now gets 401 from the service's routes; returns how many. */
  expireTokens(): number;
  /** The next `count` calls to the service's routes answer 401 (or `status`), whatever the token. */
  failNext(count: number, options?: FailNextOptions): void;
  /** Lifetime of the tokens issued from now on. */
  setTokenTtl(seconds: number): void;
  /** A token as the token route would hand it out. */
  issueToken(user: string): string;
  /** A token checked as the service's routes check it. */
  verifyToken(token: string): TokenVerdict;
  /** The token route's user; null signs out (its answer is then 401). */
  user: string | null;
  /** Every call so far, oldest first. */
  readonly calls: readonly MockCall[];
  readonly stats: Readonly<MockHostStats>;
  /** The storage behind the storage functions (key → value). */
  readonly storage: Map<string, unknown>;
  /** The files behind the file system (path → bytes). */
  readonly files: Map<string, Uint8Array>;
  /** The service's events (tokens, data calls, control), as the sandbox reports them. */
  subscribe(listener: (event: SandboxEvent) => void): () => void;
}
