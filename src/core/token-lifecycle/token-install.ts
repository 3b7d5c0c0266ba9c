import { claimsOf } from './jwt-claims.js';
import type { ServerClock } from './server-clock.js';
import { timeToken } from './token-timing.js';
import type { HeldToken, Obtained, TokenManagerOptions, TokenState } from './token-types.js';
import type { TokenReason } from '../types.js';

/**
 * Installs a token of a token manager: reads its claims, numbers it, times its end against the
 * server's clock (token-timing.ts), holds it, tells `onToken`, and keeps it in the store when
 * its end is known. `key` is the tokenStore key() it was obtained under.
 */
export function createTokenInstaller(
  state: TokenState,
  options: Pick<TokenManagerOptions, 'now' | 'refreshLeeway' | 'onToken' | 'service'>,
  clock: ServerClock,
): (got: Obtained, reason: TokenReason, key: string | undefined) => HeldToken {
  const { now, refreshLeeway } = options;
  const { keyOf, write } = state;
  let version = 0;

  return function install(got, reason, key) {
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
    state.held = h;
    state.active = true;
    options.onToken(reason, h);
    // A `token` listener that logged out (or switched users) ended this token: nothing of it is kept.
    if (state.held !== h) return h;
    // Only a token whose end is known and ahead, and (with key()) whose user is known.
    if (write && state.saving && reason !== 'stored' && h.end > now() && h.end < Infinity && (!keyOf || key)) {
      write(Object.assign({ token: h.token, receivedAt: h.receivedAt, expiresAt: h.end, service: options.service }, keyOf ? { key } : {}));
    }
    return h;
  };
}
