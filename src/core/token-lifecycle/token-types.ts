import type { ClientTelemetry } from '../telemetry-hooks.js';
import type { TokenProviderError } from '../../errors/TokenProviderError.js';
import type { Redactor } from '../redactor.js';
import type { DateSource } from './server-clock.js';
import type { RuntimeAbortSignal, StoredToken, TokenProvider, TokenReason, TokenStore } from '../types.js';

/** A token as the client holds it. `version` grows by one with every token installed. */
export interface HeldToken {
  readonly token: string;
  readonly version: number;
  /** Local epoch ms at which the token was asked for (or received, for a shared or stored one). */
  readonly receivedAt: number;
  /** Local epoch ms after which the token is treated as expired; Infinity when unknown or untracked. */
  expiresAt: number;
  /** Local epoch ms from which a refresh ahead of expiry starts; Infinity when none. */
  refreshAt: number;
  /** The tokenStore key() it was obtained under (undefined without one). */
  readonly key: string | undefined;
  /** Local epoch ms at which it ends as far as known, refreshLeeway or not (what a store keeps). */
  end: number;
  /** Its `iat`/`exp` (epoch ms of the server's clock), the local ms the provider answered, a forced call's, a stored end. */
  readonly iat?: number;
  readonly exp?: number;
  readonly doneAt: number;
  readonly fresh: boolean;
  readonly until: number;
}

/** Where a call's token came from: the provider, another tab (`shared`) or the store (`stored`). */
export interface Obtained {
  token: string;
  receivedAt: number;
  /** Local ms at which the provider answered. */
  doneAt?: number;
  /** From a forced provider call: the backend bypassed its caches, so the token was just issued. */
  fresh?: boolean;
  shared?: boolean;
  stored?: boolean;
  /** The end a stored token was saved with. */
  until?: number;
}

/**
 * Shares the token and its refreshes with other clients (the browser entry's tabs). The
 * core calls `obtain` instead of the provider and `clear` on clearToken(); the share calls
 * back `adopt` and `cleared` for what the others did.
 */
export interface TokenShare {
  /**
   * Resolves to a token for this client: one another client obtained after `stale` was
   * (`shared: true`), or the result of `fetch` (the provider call), run so that one client at
   * a time fetches, and announced to the others before the next one may.
   */
  obtain(stale: HeldToken | undefined, fetch: () => Promise<Obtained>): Promise<Obtained>;
  /** Called synchronously by clearToken(): from then on nothing obtained before is adopted or handed out. */
  clear(): void;
  /** Wires the share's announcements into the manager; called once. */
  connect(adopt: (token: string, receivedAt: number) => void, cleared: () => void): void;
}

export interface TokenManagerOptions {
  provider: TokenProvider;
  tokenTimeout: number;
  /** Seconds; 0 disables expiry tracking. */
  refreshLeeway: number;
  now: () => number;
  /** Creates the controller whose signal the provider receives; absent on hosts without one. */
  createAbortController?: () => { signal: RuntimeAbortSignal; abort(): void };
  onToken: (reason: TokenReason, held: HeldToken) => void;
  onError: (reason: TokenReason, error: TokenProviderError) => void;
  /** Cuts tokens out of what a provider's error leaves in the TokenProviderError. */
  redact: Pick<Redactor, 'text' | 'cause'>;
  /** Keeps the token across relaunches. */
  store?: TokenStore;
  /** The client's baseUrl: a stored token is bound to it as well as to its user. */
  service: string;
  share?: TokenShare;
  /** The session ended other than by clear(): a logout in another tab, or a new tokenStore key(). Requests under way must be fenced. */
  onRemoteClear?: () => void;
  /** Spans and metrics of the provider calls, when the client has `telemetry`. */
  telemetry?: ClientTelemetry;
}

export interface TokenManager {
  /** The token to send now: the held one when usable (synchronously), else a shared provider call. */
  get(): HeldToken | Promise<HeldToken>;
  /** After a 401 on `version`: a newer held token if there is one, else one shared forced refresh. */
  afterUnauthorized(version: number): HeldToken | Promise<HeldToken>;
  /** A forced provider call (shared with any forced call in flight). */
  refresh(reason: TokenReason): Promise<HeldToken>;
  /**
   * Forgets the held token (and the stored one; other tabs of a share are told). Provider calls
   * already in flight install nothing: whoever waits on them gets an AbortError (a token asked
   * for before a logout is never handed out).
   */
  clear(): void;
  /** Reads tokenStore's key(): a new one ends the session as clear() would (the store keeps its record). */
  sync(): void;
  /** A response's headers (its `Date`), with the local times its request was sent and answered. */
  observe(headers: DateSource, sentAt: number, doneAt: number): void;
  /**
   * The app came back (shown, online): a held token that has ended or is within refreshLeeway
   * is refreshed now, shared with the calls that come meanwhile; otherwise nothing happens.
   */
  warm(): void;
}

/** The provider call under way, shared by whoever asks meanwhile. */
export interface Flight {
  promise: Promise<HeldToken>;
  /** A forced call: a plain call may join it, not the other way round. */
  forced: boolean;
}

/**
 * What the parts of one token manager share (token-manager.ts makes it): the store's two tools,
 * and the state each part reads and the others may change. Each field says who changes it.
 */
export interface TokenState {
  /** The tokenStore's key() as a user key; undefined without a store or a key(). */
  readonly keyOf: (() => string | undefined) | undefined;
  /** Writes the store, the newest wish winning (store-writer.ts); undefined without a store. */
  readonly write: ((value: StoredToken | null) => void) | undefined;
  /** The token in use: set by install, dropped by the fence. */
  held?: HeldToken;
  /** The key() the current session belongs to: the fence's sync() follows it. */
  session?: string;
  /** The session has asked for or holds a token (obtain, install); the fence resets it. */
  active: boolean;
  /** Install writes new tokens to the store; the fence stops that after a logout with a store without key(). */
  saving: boolean;
  /** The store was read for this session: obtain reads it once, for the first token; the fence sets it on a logout. */
  restored: boolean;
  /** Bumped by the fence: a provider call started before installs nothing. */
  epoch: number;
  /** The provider call in flight (obtain); the fence drops it. */
  flight?: Flight;
}
