import { createServerClock } from './server-clock.js';
import { storeKeyReader } from './user-key.js';
import { createStoreWriter } from './store-writer.js';
import { postponeRefresh, timeToken } from './token-timing.js';
import { createTokenInstaller } from './token-install.js';
import { createTokenFence } from './token-fence.js';
import { isJwt } from './jwt-claims.js';
import type { HeldToken, TokenManager, TokenManagerOptions, TokenState } from './token-types.js';
import { createTokenObtainer } from './token-obtain.js';

/**
 * The client's token manager. The token's life, one part at a time:
 * - obtain (token-obtain.ts): one provider call at a time, bounded by tokenTimeout
 *   (provider-call.ts), the store read first, once per session (store-reader.ts);
 * - install (token-install.ts): claims, version, the store write;
 * - time (token-timing.ts): when the token ends and its refresh ahead starts, against the
 *   server's clock (server-clock.ts);
 * - refresh (here): the held token while it is good, a refresh ahead of its end, a new one
 *   when it expired, a forced one after a 401 or on request;
 * - fence (token-fence.ts): clear(), another tab's logout, and the user switch sync().
 * They share one {@link TokenState}.
 */
export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const { now, refreshLeeway, store, share } = options;
  const clock = createServerClock();
  const state: TokenState = {
    keyOf: storeKeyReader(store),
    write: store && createStoreWriter(store, options.tokenTimeout, options.service),
    active: false,
    saving: !!store,
    restored: !store,
    epoch: 0,
  };
  const fence = createTokenFence(state, options);
  const { sync } = fence;
  const install = createTokenInstaller(state, options, clock);
  const { acquire, call } = createTokenObtainer(state, options, sync, install);

  function refreshAhead(current: HeldToken): void {
    if (state.flight) return;
    const later = () => postponeRefresh(current, now());
    // The same token back, or a new one already due (tokens that live a few seconds, whose
    // half-life the clock's second of doubt eats): the next try waits, not the next request.
    call(true, 'proactive').then((h) => void ((h === current || h.refreshAt <= now()) && postponeRefresh(h, now())), later);
  }

  if (share) {
    share.connect((token, receivedAt) => {
      sync();
      // Another tab's token: taken when newer than ours, without asking the provider.
      const { held } = state;
      if (isJwt(token) && (!held || (held.token !== token && receivedAt > held.receivedAt))) install({ token, receivedAt }, 'shared', state.session);
    }, fence.clearedElsewhere);
  }

  return {
    get() {
      sync();
      const current = state.held;
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
      const { held } = state;
      if (held && held.version > usedVersion) return held;
      return acquire(true, 'unauthorized');
    },
    refresh(reason) {
      sync();
      return acquire(true, reason);
    },
    clear: fence.clear,
    sync,
    observe(headers, sentAt, doneAt) {
      if (clock.observe(headers, sentAt, doneAt) && state.held) timeToken(state.held, false, clock, refreshLeeway);
    },
    warm() {
      sync();
      // Only a token held: after a logout (or before the first call) nothing is asked for.
      if (state.held && now() >= state.held.refreshAt) {
        const got = this.get();
        // Its failure is the token:error event's, and the next call's to retry.
        if ('then' in got) got.then(undefined, () => {});
      }
    },
  };
}
