import { isChannelError } from '../../errors/ChannelError.js';
import { TokenProviderError } from '../../errors/TokenProviderError.js';
import { messageOf } from '../../shared/message.js';
import { tokenFingerprint } from '../../shared/fingerprint.js';
import { callProvider } from './provider-call.js';
import { abortError, cleared } from '../requests/request-abort.js';
import { createStoreReader } from './store-reader.js';
import type { HeldToken, Obtained, TokenManagerOptions, TokenState } from './token-types.js';
import type { SignalLike, TokenReason } from '../types.js';
import { tokenFromAnswer } from './provider-answer.js';

/** How a token manager obtains a token. */
export interface TokenObtainer {
  /** The provider call in flight if it will do, else a new one. */
  acquire(forced: boolean, reason: TokenReason): Promise<HeldToken>;
  /** A new provider call (`forced`: the backend must bypass its caches), which becomes the one in flight. */
  call(forced: boolean, reason: TokenReason): Promise<HeldToken>;
}

/**
 * Obtaining a token: one provider call at a time (the flight, joined by whoever asks meanwhile),
 * bounded by tokenTimeout, through the share when there is one; the store read first, once per
 * session; and what comes back installed unless the fence or a newer token came in between.
 */
export function createTokenObtainer(
  state: TokenState,
  options: TokenManagerOptions,
  sync: () => void,
  install: (got: Obtained, reason: TokenReason, key: string | undefined) => HeldToken,
): TokenObtainer {
  const { now, store, share } = options;
  const restore = store && createStoreReader(store, !!state.keyOf, options);
  let calls = 0; // provider calls started
  let installedCall = 0; // the call whose token is held

  function call(forced: boolean, reason: TokenReason): Promise<HeldToken> {
    const id = ++calls;
    const callEpoch = state.epoch;
    const key = state.session;
    const stale = state.held;
    state.active = true;
    const fetch = () => {
      const receivedAt = now();
      const asked = () => callProvider(options, forced, forced && stale ? tokenFingerprint(stale.token) : undefined);
      return (options.telemetry ? options.telemetry.provider({ forced, reason, run: asked }) : asked()).then((value) => ({
        token: tokenFromAnswer(value),
        receivedAt,
        doneAt: now(),
        fresh: forced,
      }));
    };
    const ask = () => (share ? share.obtain(stale, fetch) : fetch());
    // The provider is asked synchronously unless the store is read first (once).
    const source: Promise<Obtained> = state.restored
      ? ask()
      : ((state.restored = true), (restore as NonNullable<typeof restore>)(key).then((found) => found || ask()));
    const promise = source
      .then((got) => {
        sync();
        if (callEpoch !== state.epoch) throw abortError({ reason: cleared } as SignalLike, {});
        // Already held (announced by another tab meanwhile), or a slower call that started
        // earlier: never replace a newer token.
        const { held } = state;
        if (held && (held.token === got.token || id < installedCall)) return held;
        installedCall = id;
        const h = install(got, got.stored ? 'stored' : got.shared ? 'shared' : reason, key);
        // A `token` listener that logged out: the token it was told of is not handed out either.
        if (callEpoch !== state.epoch) throw abortError({ reason: cleared } as SignalLike, {});
        return h;
      })
      // Chained after, not beside, the handler above: a bad return value fails in there.
      .then(undefined, (error: unknown) => {
        // A call of an earlier epoch fails quietly: nobody of this session asked for it.
        if (callEpoch !== state.epoch) throw abortError({ reason: cleared } as SignalLike, {});
        const wrapped =
          // isChannelError first: `instanceof` throws on a revoked Proxy, which a provider may throw.
          isChannelError(error) && error instanceof TokenProviderError
            ? error
            : new TokenProviderError('tokenProvider threw: ' + options.redact.text(messageOf(error)), { cause: options.redact.cause(error) });
        options.onError(reason, wrapped);
        throw wrapped;
      })
      // Past its end by the server's clock already (a backend cache handed out an old token):
      // a new one is asked for instead of sending this one. A forced call's token is used.
      .then((h) => (!forced && h === state.held && h.expiresAt <= now() ? acquire(true, 'expired') : h));
    const done = () => {
      if (state.flight && state.flight.promise === promise) state.flight = undefined;
    };
    promise.then(done, done);
    state.flight = { promise, forced };
    return promise;
  }

  function acquire(forced: boolean, reason: TokenReason): Promise<HeldToken> {
    const { flight } = state;
    // A forced refresh never joins a plain call in flight: that one may return a cached token.
    if (flight && (flight.forced || !forced)) return flight.promise;
    return call(forced, reason);
  }

  return { acquire, call };
}
