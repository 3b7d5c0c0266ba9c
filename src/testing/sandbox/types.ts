import type { Logistics } from '../../schemas/logistics.js';

/** Options of `startSandbox`. */
export interface SandboxOptions {
  /** @default 0 (a free port) */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Lifetime of issued JWTs, in seconds; shorten it for QA (or later with `setTokenTtl`). @default 900 */
  tokenTtlSeconds?: number;
  /** Where pushes go when a push names no URL and no `channel-sandbox listen` is connected. */
  webhookUrl?: string;
  /** Signs pushes; empty means pushes go unsigned, as the service does. @default '' */
  webhookSecret?: string;
  /** How long a push waits for the receiver. @default 8000 (the service's window) */
  webhookTimeoutMs?: number;
  /** Partner credentials the token endpoint accepts. @default random ones, see `credentials` */
  credentials?: { accessKey: string; secretKey: string };
  /** The sandbox's clock in epoch ms (token expiry, timestamp window, event times). @default the system clock */
  now?: () => number;
  /**
   * Who may use the control API under `/__sandbox/` (the sandbox's own, not the service's):
   * `'loopback'` (clients on this machine), `'any'` (e.g. a sandbox in a container), `'off'`.
   * Web pages are always refused: a request with `Origin` or a `Sec-Fetch-Site` other than
   * `none`, a Host name a DNS-rebinding page could use, and any write that is not a POST of
   * `application/json` (which no page can send without a CORS consent the sandbox never gives).
   * @default 'loopback'
   */
  controlApi?: 'loopback' | 'any' | 'off';
  /**
   * Host names the control API answers besides IP addresses, `localhost`, `*.localhost` and
   * single-label names such as `sandbox` (a guard against DNS rebinding), e.g. `['sandbox.ci.internal']`.
   * @default []
   */
  controlHosts?: string[];
  /** Called for everything the sandbox does, for timelines and logs. Never carries a token or secret. */
  onEvent?: (event: SandboxEvent) => void;
}

/** What a sandbox event holds, without its `seq` and `at`. */
export type SandboxEventBody =
  /** A token was issued: by the token endpoint (`via: 'endpoint'`) or by `issueToken` / the control API (`'direct'`). */
  | { type: 'token'; ok: true; externalUserId: string; jti: string; via: 'endpoint' | 'direct' }
  /** The token endpoint refused a request. */
  | { type: 'token'; ok: false; status: number; code: number; reason: string }
  /** A data call and its answer; `jti` names the token it carried when that token was good. */
  | { type: 'data'; method: string; path: string; query?: string; status: number; reason?: string; jti?: string }
  | { type: 'control'; action: 'expire'; expired: number }
  | { type: 'control'; action: 'fail-next'; count: number; status: number }
  | { type: 'control'; action: 'ttl'; seconds: number }
  /** A push left the sandbox (its outcome follows as a `push` event). */
  | { type: 'push:sent'; id: number; url: string; orderNo: string; signed: boolean; tampered: boolean; via: PushRecord['via'] }
  /** A push and its outcome. */
  | { type: 'push'; record: PushRecord }
  /** A `channel-sandbox listen` connected or went away. */
  | { type: 'listener'; connected: boolean; forwardTo: string };

/** What the sandbox reports through `onEvent`, `subscribe` and `GET /__sandbox/events`. */
export type SandboxEvent = SandboxEventBody & {
  /** 1, 2, 3… in the order things happened. */
  seq: number;
  /** When it happened: epoch ms on the sandbox's clock, with sub-millisecond precision on the system clock. */
  at: number;
};

/** One push and its outcome. */
export interface PushRecord {
  id: number;
  url: string;
  orderNo: string;
  signed: boolean;
  tampered: boolean;
  /** `direct`: the sandbox POSTed to `url`; `listener`: a connected `channel-sandbox listen` forwarded it. */
  via: 'direct' | 'listener';
  /** 2xx from the receiver within the window. */
  ok: boolean;
  status?: number;
  durationMs: number;
  /** Why it failed: `HTTP 500`, `timeout after 8000 ms`, `connection failed: …`, `listener disconnected`. */
  error?: string;
  /** The receiver's answer body: whitespace collapsed, at most 300 characters, JWT-shaped text masked. */
  answer?: string;
  /**
   * The receiver said it had this push already (a 2xx whose JSON answer has `"duplicate": true`,
   * as `createWebhookHandler` answers a repeat): it did not run its callback again.
   */
  duplicate?: boolean;
  /** The earlier push whose very bytes this one sent again to the same URL (`fresh` sends new ones). */
  repeatOf?: number;
}

/** What `pushLogistics` resolves to. */
export type PushResult = Pick<PushRecord, 'id' | 'ok' | 'status' | 'durationMs' | 'error' | 'answer' | 'url' | 'via' | 'orderNo' | 'duplicate' | 'repeatOf'>;

/** The claims of a sandbox JWT that a check reports. */
export interface TokenClaims {
  /** The external user id. */
  sub: string;
  iat: number;
  exp: number;
  /** 1, 2, 3… in issue order: the "token #3" of the event stream. */
  jti: string;
}

/** What `verifyToken` finds: a token this sandbox issued and still accepts, or why not. */
export type TokenVerdict = { valid: true; claims: TokenClaims; reason?: undefined } | { valid: false; reason: string; claims?: TokenClaims };

/** Options of `pushLogistics`. */
export interface PushOptions {
  /** Where to POST instead of the connected listener or `webhookUrl`. */
  url?: string;
  /** Alter the body after signing, as a man in the middle would: the receiver must refuse it. */
  tamper?: boolean;
  /**
   * Push a new snapshot of the order (given by its number): one more tracking event, now, kept
   * by the sandbox, so the body differs from every earlier push and a receiver that deduplicates
   * runs its callback again. Without it, the same order pushed twice is the same bytes: a repeat.
   */
  fresh?: boolean;
}

/** What the next failed data calls answer. */
export interface FailNextOptions {
  /** @default 401 */
  status?: 401 | 408 | 429 | 500 | 502 | 503 | 504;
  /** Sent as `Retry-After` (seconds) with the failures. */
  retryAfterSeconds?: number;
}

/** Counters since start. */
export interface SandboxStats {
  tokenCalls: number;
  tokensIssued: number;
  tokenRejections: number;
  dataCalls: number;
  unauthorized: number;
  pushes: number;
  pushFailures: number;
}

/** A running sandbox. */
export interface Sandbox {
  /** Base URL, e.g. `http://127.0.0.1:43125`: the `baseUrl` for both the client and `createTokenExchange`. */
  url: string;
  /** The AK/SK the token endpoint accepts. */
  credentials: { accessKey: string; secretKey: string };
  /** Issues a JWT directly, as the token endpoint would (for tests that skip the exchange). */
  issueToken(externalUserId: string): Promise<string>;
  /**
   * Checks a JWT as the data routes would: `{ valid: true, claims }` for a token this sandbox
   * issued and still accepts, else `{ valid: false, reason }` (another key, expired, `expireTokens()`).
   */
  verifyToken(token: string): TokenVerdict;
  /** Every JWT issued so far now gets 401. Returns how many that is. */
  expireTokens(): number;
  /** The next `count` data calls answer 401 (or `options.status`) whatever the token. */
  failNext(count: number, options?: FailNextOptions): void;
  /** Lifetime of the tokens issued from now on. */
  setTokenTtl(seconds: number): void;
  /** Lifetime of the tokens issued from now on, in seconds. */
  readonly tokenTtlSeconds: number;
  /**
   * POSTs a signed `logistics.updated` push and records the outcome: `logistics` is the object
   * to send or the order number of one of the sandbox's orders. It goes to `options.url`, else
   * through a connected `channel-sandbox listen`, else to `webhookUrl`.
   */
  pushLogistics(logistics: Logistics | string, options?: PushOptions): Promise<PushResult>;
  /** Calls `listener` for every event from now on; returns the function that stops it. */
  subscribe(listener: (event: SandboxEvent) => void): () => void;
  /** Every push so far, oldest first. */
  readonly pushes: readonly PushRecord[];
  readonly stats: Readonly<SandboxStats>;
  close(): Promise<void>;
}
