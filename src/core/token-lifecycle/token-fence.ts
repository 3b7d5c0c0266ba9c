import type { TokenManagerOptions, TokenState } from './token-types.js';

/** What ends a session, as the token manager's fence. */
export interface TokenFence {
  /** clearToken(): forgets the token and the stored one, and tells the other tabs of a share. */
  clear(): void;
  /** Another tab logged out: forgets the token as clear() does, and has the requests under way fenced. */
  clearedElsewhere(): void;
  /** Reads tokenStore's key(): a new one ends the session as clear() would, the store keeping its record. */
  sync(): void;
}

/**
 * The fence of a token manager. Whatever ends a session bumps the epoch: a provider call
 * under way then installs nothing, and whoever waits on it gets an AbortError (a token asked
 * for before a logout is never handed out).
 */
export function createTokenFence(state: TokenState, options: Pick<TokenManagerOptions, 'share' | 'onRemoteClear'>): TokenFence {
  const { keyOf, write } = state;
  const { share } = options;
  let loggedOut = false; // clear() ran (here or in another tab)

  function forget(): void {
    state.held = undefined;
    state.epoch++;
    state.flight = undefined;
    state.active = false;
  }

  /** A logout, here or in another tab: nothing stored is restored in this run, and a store without key() keeps nothing more. */
  function logout(): void {
    forget();
    loggedOut = state.restored = true;
    if (!keyOf) state.saving = false;
    if (write) write(null);
  }

  function sync(): void {
    if (!keyOf) return;
    const key = keyOf();
    if (key === state.session) return;
    state.session = key;
    state.restored = loggedOut;
    if (!state.active) return;
    // Another user (or none) since the last look: the session ends as on clearToken(), though
    // the store keeps its record (bound to its own key).
    forget();
    if (share) share.clear();
    if (options.onRemoteClear) options.onRemoteClear();
  }

  return {
    clear() {
      logout();
      if (share) share.clear();
    },
    clearedElsewhere() {
      logout();
      if (options.onRemoteClear) options.onRemoteClear();
    },
    sync,
  };
}
