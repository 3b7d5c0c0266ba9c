import { TokenProviderError } from '../errors/TokenProviderError.js';
import { describe, messageOf } from './check.js';
import { decodePayload, jwtShape, lifetimeMs } from './jwt.js';
import type { Redactor } from './redact.js';
import { abortError, cleared } from './signal.js';
import type { SignalLike, StoredToken, TokenProvider, TokenReason, TokenStore } from './types.js';

/** A token as the client holds it. `version` grows by one with every token installed. */
export interface HeldToken {
  readonly token: string;
  readonly version: number;
  /** Local epoch ms at which the token was asked for (or received, for a shared or stored one). */
  readonly receivedAt: number;
  /** Local epoch ms after which the token is treated as expired; Infinity when unknown. */
  readonly expiresAt: number;
  /** Local epoch ms from which a refresh ahead of expiry starts; Infinity when none. */
  refreshAt: number;
}

/** Where a call's token came from: the provider, another tab (`shared`) or the store (`stored`). */
export interface Obtained {
  token: string;
  receivedAt: number;
  shared?: boolean;
  stored?: boolean;
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
  createAbortController?: () => { signal: AbortSignal; abort(): void };
  onToken: (reason: TokenReason, held: HeldToken) => void;
  onError: (reason: TokenReason, error: TokenProviderError) => void;
  /** Cuts tokens out of what a provider's error leaves in the TokenProviderError. */
  redact: Pick<Redactor, 'text' | 'cause'>;
  /** Keeps the token across relaunches. */
  store?: TokenStore;
  share?: TokenShare;
  /** Another client of the share cleared the session (a logout in another tab). */
  onRemoteClear?: () => void;
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
}

interface Flight {
  promise: Promise<HeldToken>;
  forced: boolean;
}

const noop = () => {};

export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const { now, refreshLeeway, store, share } = options;
  let held: HeldToken | undefined;
  let version = 0;
  let calls = 0; // provider calls started
  let installedCall = 0; // the call whose token is held
  let epoch = 0; // bumped by clear()
  let flight: Flight | undefined;
  let restored = !store; // the store is read once, for the first token

  function call(forced: boolean, reason: TokenReason): Promise<HeldToken> {
    const id = ++calls;
    const callEpoch = epoch;
    const stale = held;
    const fetch = () => {
      const receivedAt = now();
      return invoke(forced).then((value) => ({ token: check(value), receivedAt }));
    };
    const ask = () => (share ? share.obtain(stale, fetch) : fetch());
    // The provider is asked synchronously unless the store is read first (once).
    const source: Promise<Obtained> = restored ? ask() : ((restored = true), restore().then((found) => found || ask()));
    const promise = source
      .then((got) => {
        if (callEpoch !== epoch) throw abortError({ reason: cleared } as SignalLike, {});
        // Already held (announced by another tab meanwhile), or a slower call that started
        // earlier: never replace a newer token.
        if (held && (held.token === got.token || id < installedCall)) return held;
        installedCall = id;
        return install(got.token, got.receivedAt, got.stored ? 'stored' : got.shared ? 'shared' : reason);
      })
      // Chained after, not beside, the handler above: a bad return value fails in there.
      .then(undefined, (error: unknown) => {
        // A call of an earlier epoch fails quietly: nobody of this session asked for it.
        if (callEpoch !== epoch) throw abortError({ reason: cleared } as SignalLike, {});
        const wrapped =
          error instanceof TokenProviderError
            ? error
            : new TokenProviderError('tokenProvider threw: ' + options.redact.text(messageOf(error)), { cause: options.redact.cause(error) });
        options.onError(reason, wrapped);
        throw wrapped;
      });
    const done = () => {
      if (flight && flight.promise === promise) flight = undefined;
    };
    promise.then(done, done);
    flight = { promise, forced };
    return promise;
  }

  function install(token: string, receivedAt: number, reason: TokenReason): HeldToken {
    held = hold(token, receivedAt);
    options.onToken(reason, held);
    if (store && reason !== 'stored') save(token, receivedAt);
    return held;
  }

  function invoke(forceRefresh: boolean): Promise<unknown> {
    const controller = options.createAbortController && options.createAbortController();
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (controller) controller.abort();
        reject(
          new TokenProviderError(
            'tokenProvider did not settle within ' +
              options.tokenTimeout +
              ' ms (tokenTimeout); make sure it always resolves or rejects',
          ),
        );
      }, options.tokenTimeout);
      const settle = (fn: (v: unknown) => void) => (v: unknown) => {
        clearTimeout(timer);
        fn(v);
      };
      new Promise<unknown>((inner) => inner(options.provider(controller ? { forceRefresh, signal: controller.signal } : { forceRefresh }))).then(
        settle(resolve),
        settle(reject),
      );
    });
  }

  function hold(token: string, receivedAt: number): HeldToken {
    const lifetime = refreshLeeway > 0 ? lifetimeMs(decodePayload(token) || {}) : undefined;
    if (lifetime === undefined) return { token, version: ++version, receivedAt, expiresAt: Infinity, refreshAt: Infinity };
    // Counted from the local time the provider was asked (never later than the token's issue),
    // with the token's own exp - iat: a device clock set wrong does not matter.
    const expiresAt = receivedAt + lifetime;
    return { token, version: ++version, receivedAt, expiresAt, refreshAt: expiresAt - Math.min(refreshLeeway * 1000, lifetime / 2) };
  }

  /**
   * The stored token, if it is still good for a while: received no later than now (a clock
   * set back would stretch its life) and at least the refresh leeway (5 s at least) before
   * its end. Whatever the store does (throws, hangs, returns junk), the provider is asked.
   */
  function restore(): Promise<Obtained | undefined> {
    const s = store as TokenStore;
    return new Promise<unknown>((resolve) => {
      const timer = setTimeout(resolve, options.tokenTimeout);
      const done = (value?: unknown) => {
        clearTimeout(timer);
        resolve(value);
      };
      new Promise((inner) => inner(s.get())).then(done, () => done());
    }).then((found) => {
      const r = found as StoredToken | undefined;
      if (!r || typeof r !== 'object' || typeof r.token !== 'string' || !jwtShape.test(r.token)) return undefined;
      const life = r.expiresAt - r.receivedAt;
      const t = now();
      return t >= r.receivedAt && t < r.expiresAt - Math.min(Math.max(refreshLeeway * 1000, 5000), life / 2)
        ? { token: r.token, receivedAt: r.receivedAt, stored: true }
        : undefined;
    });
  }

  /** Stores a token whose lifetime is known; a failing store never fails a request. */
  function save(token: string, receivedAt: number): void {
    const lifetime = lifetimeMs(decodePayload(token) || {});
    if (lifetime === undefined) return;
    attempt(() => (store as TokenStore).set({ token, receivedAt, expiresAt: receivedAt + lifetime }));
  }

  function acquire(forced: boolean, reason: TokenReason): Promise<HeldToken> {
    // A forced refresh never joins a plain call in flight: that one may return a cached token.
    if (flight && (flight.forced || !forced)) return flight.promise;
    return call(forced, reason);
  }

  function refreshAhead(current: HeldToken): void {
    if (flight) return;
    call(true, 'proactive').then(noop, () => {
      // Keep using the still-valid token; try again after half the time it has left (at least 1 s).
      const t = now();
      current.refreshAt = t + Math.max(1000, (current.expiresAt - t) / 2);
    });
  }

  function forget(): void {
    held = undefined;
    epoch++;
    flight = undefined;
  }

  if (share) {
    share.connect(
      (token, receivedAt) => {
        // Another tab's token: taken when newer than ours, without asking the provider.
        if (!held || (held.token !== token && receivedAt > held.receivedAt)) install(token, receivedAt, 'shared');
      },
      () => {
        forget();
        if (options.onRemoteClear) options.onRemoteClear();
      },
    );
  }

  return {
    get() {
      const current = held;
      if (current) {
        if (current.refreshAt === Infinity) return current;
        const t = now();
        if (t < current.refreshAt) return current;
        if (t < current.expiresAt) {
          refreshAhead(current);
          return current;
        }
        return acquire(true, 'expired');
      }
      return acquire(false, 'initial');
    },
    afterUnauthorized(usedVersion) {
      if (held && held.version > usedVersion) return held;
      return acquire(true, 'unauthorized');
    },
    refresh(reason) {
      return acquire(true, reason);
    },
    clear() {
      forget();
      if (share) share.clear();
      if (store) attempt(() => (store as TokenStore).remove());
    },
  };
}

/** Runs a store call whose failure (sync or async) must not matter. */
function attempt(fn: () => unknown): void {
  new Promise((resolve) => resolve(fn())).then(noop, noop);
}

function check(value: unknown): string {
  if (typeof value !== 'string') {
    if (value !== null && typeof value === 'object') {
      const hint = 'access_token' in value ? 'access_token' : 'data' in value ? 'data.access_token' : 'the access_token string';
      throw new TokenProviderError('tokenProvider returned an object; return ' + hint + ', the string itself');
    }
    throw new TokenProviderError(
      'tokenProvider returned ' + describe(value) + '; it must resolve to the access_token string' +
        (value === undefined ? ' (is a `return` missing?)' : ''),
    );
  }
  if (value === '') throw new TokenProviderError('tokenProvider returned an empty string; return the access_token from the token endpoint');
  if (/^bearer\s/i.test(value)) {
    throw new TokenProviderError('tokenProvider returned a string starting with "Bearer "; return the token alone, the SDK adds the prefix');
  }
  if (!jwtShape.test(value) || !decodePayload(value)) {
    // The value itself is never quoted: it may be a credential.
    throw new TokenProviderError(
      'tokenProvider returned a string of ' + value.length + ' characters that is not a JWT (header.payload.signature, base64url); return access_token from the token endpoint, not a console login token or a session id',
    );
  }
  return value;
}
