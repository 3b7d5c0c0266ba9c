import { TokenProviderError } from '../errors/TokenProviderError.js';
import { messageOf } from '../shared/message.js';
import { claimsOf, isJwt } from './jwt-claims.js';
import { createServerClock } from './server-clock.js';
import { abortError, cleared } from './request-abort.js';
import { createStoreWriter } from './store-writer.js';
import { storeKeyReader } from './user-key.js';
import { createStoreReader } from './store-reader.js';
import { callProvider } from './provider-call.js';
import { timeToken } from './token-timing.js';
import type { HeldToken, Obtained, TokenManager, TokenManagerOptions } from './token-types.js';
import type { SignalLike, TokenReason } from './types.js';
// Last, so that bundlers place it after the modules above, as when it was part of this file.
import { tokenFromAnswer } from './provider-answer.js';

interface Flight {
  promise: Promise<HeldToken>;
  forced: boolean;
}

export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const { now, refreshLeeway, store, share } = options;
  const clock = createServerClock();
  const write = store && createStoreWriter(store, options.tokenTimeout);
  const keyOf = storeKeyReader(store);
  const restore = store && createStoreReader(store, !!keyOf, options);
  let session: string | undefined; // the key the current session belongs to
  let active = false; // the session has asked for or holds a token
  let loggedOut = false; // clear() ran (here or in another tab)
  let saving = !!store;
  let held: HeldToken | undefined;
  let version = 0;
  let calls = 0; // provider calls started
  let installedCall = 0; // the call whose token is held
  let epoch = 0; // bumped by clear()
  let flight: Flight | undefined;
  let restored = !store; // the store is read once per session, for its first token, never after a logout

  function call(forced: boolean, reason: TokenReason): Promise<HeldToken> {
    const id = ++calls;
    const callEpoch = epoch;
    const key = session;
    const stale = held;
    active = true;
    const fetch = () => {
      const receivedAt = now();
      return callProvider(options, forced).then((value) => ({ token: tokenFromAnswer(value), receivedAt, doneAt: now(), fresh: forced }));
    };
    const ask = () => (share ? share.obtain(stale, fetch) : fetch());
    // The provider is asked synchronously unless the store is read first (once).
    const source: Promise<Obtained> = restored ? ask() : ((restored = true), (restore as NonNullable<typeof restore>)(key).then((found) => found || ask()));
    const promise = source
      .then((got) => {
        sync();
        if (callEpoch !== epoch) throw abortError({ reason: cleared } as SignalLike, {});
        // Already held (announced by another tab meanwhile), or a slower call that started
        // earlier: never replace a newer token.
        if (held && (held.token === got.token || id < installedCall)) return held;
        installedCall = id;
        return install(got, got.stored ? 'stored' : got.shared ? 'shared' : reason, key);
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
      })
      // Past its end by the server's clock already (a backend cache handed out an old token):
      // a new one is asked for instead of sending this one. A forced call's token is used.
      .then((h) => (!forced && h === held && h.expiresAt <= now() ? acquire(true, 'expired') : h));
    const done = () => {
      if (flight && flight.promise === promise) flight = undefined;
    };
    promise.then(done, done);
    flight = { promise, forced };
    return promise;
  }

  function install(got: Obtained, reason: TokenReason, key: string | undefined): HeldToken {
    const { iat, exp } = claimsOf(got.token);
    const h: HeldToken = {
      token: got.token,
      version: ++version,
      receivedAt: got.receivedAt,
      expiresAt: Infinity,
      refreshAt: Infinity,
      key,
      end: Infinity,
      iat,
      exp,
      doneAt: got.doneAt || got.receivedAt,
      fresh: !!got.fresh,
      until: got.until || Infinity,
    };
    timeToken(h, true, clock, refreshLeeway);
    held = h;
    active = true;
    options.onToken(reason, h);
    // Only a token whose end is known and ahead, and (with key()) whose user is known.
    if (write && saving && reason !== 'stored' && h.end > now() && h.end < Infinity && (!keyOf || key)) {
      write(Object.assign({ token: h.token, receivedAt: h.receivedAt, expiresAt: h.end }, keyOf ? { key } : {}));
    }
    return h;
  }

  function acquire(forced: boolean, reason: TokenReason): Promise<HeldToken> {
    // A forced refresh never joins a plain call in flight: that one may return a cached token.
    if (flight && (flight.forced || !forced)) return flight.promise;
    return call(forced, reason);
  }

  function refreshAhead(current: HeldToken): void {
    if (flight) return;
    // Keep using the still-valid token; try again after half the time it has left (at least
    // 1 s), also when the provider handed back the very same token.
    const later = () => {
      const t = now();
      current.refreshAt = t + Math.max(1000, (current.expiresAt - t) / 2);
    };
    call(true, 'proactive').then((h) => void (h === current && later()), later);
  }

  function forget(): void {
    held = undefined;
    epoch++;
    flight = undefined;
    active = false;
  }

  /** A logout, here or in another tab: nothing stored is restored in this run, and a store without key() keeps nothing more. */
  function logout(): void {
    forget();
    loggedOut = restored = true;
    if (!keyOf) saving = false;
    if (write) write(null);
  }

  function sync(): void {
    if (!keyOf) return;
    const key = keyOf();
    if (key === session) return;
    session = key;
    restored = loggedOut;
    if (!active) return;
    // Another user (or none) since the last look: the session ends as on clearToken(), though
    // the store keeps its record (bound to its own key).
    forget();
    if (share) share.clear();
    if (options.onRemoteClear) options.onRemoteClear();
  }

  if (share) {
    share.connect(
      (token, receivedAt) => {
        sync();
        // Another tab's token: taken when newer than ours, without asking the provider.
        if (isJwt(token) && (!held || (held.token !== token && receivedAt > held.receivedAt))) install({ token, receivedAt }, 'shared', session);
      },
      () => {
        logout();
        if (options.onRemoteClear) options.onRemoteClear();
      },
    );
  }

  return {
    get() {
      sync();
      const current = held;
      if (current) {
        if (current.refreshAt === Infinity) return current;
        const t = now();
        // The end first: a failed refresh ahead may have put refreshAt past it.
        if (t >= current.expiresAt) return acquire(true, 'expired');
        if (t >= current.refreshAt) refreshAhead(current);
        return current;
      }
      return acquire(false, 'initial');
    },
    afterUnauthorized(usedVersion) {
      sync();
      if (held && held.version > usedVersion) return held;
      return acquire(true, 'unauthorized');
    },
    refresh(reason) {
      sync();
      return acquire(true, reason);
    },
    clear() {
      logout();
      if (share) share.clear();
    },
    sync,
    observe(date, sentAt, doneAt) {
      if (clock.observe(date, sentAt, doneAt) && held) timeToken(held, false, clock, refreshLeeway);
    },
  };
}
