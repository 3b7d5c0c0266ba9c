// When a held token ends and when its refresh ahead starts, against the server's clock.
import type { ServerClock } from './server-clock.js';
import type { HeldToken } from './token-types.js';

/**
 * How far a fresh token's `iat` may sit from the server clock learnt from `Date` headers (ms)
 * before that clock is dropped: the service's own machines and the network stay well within.
 */
const TOLERANCE = 30000;

/**
 * Works out when `h` ends, in local ms: `exp - iat` after the local time the provider was
 * asked (never earlier than a fresh token's issue, and no device clock involved), or sooner
 * when the server's clock (learnt from Date headers) says `exp` comes sooner: the token may
 * have come from a backend cache. `first`: at install; later only an earlier end is taken.
 */
export function timeToken(h: HeldToken, first: boolean, clock: ServerClock, refreshLeeway: number): void {
  const { iat, exp } = h;
  const life = iat !== undefined && exp !== undefined && exp > iat ? exp - iat : undefined;
  let end = Math.min(life === undefined ? Infinity : h.receivedAt + life, h.until);
  const range = clock.range();
  if (range && exp !== undefined) {
    // A fresh token was issued while its call ran. A server clock that says otherwise is wrong
    // (a gateway's Date, a device clock reset) and is dropped: it never causes a refresh loop.
    // Without `iat`, what the clock may not say is that the token, just issued, ends (within
    // TOLERANCE) as it arrives.
    if (
      h.fresh &&
      (iat === undefined ? exp - range[1] < h.doneAt + TOLERANCE : iat - h.doneAt > range[1] + TOLERANCE || iat + 1000 - h.receivedAt < range[0] - TOLERANCE)
    )
      clock.distrust();
    // A fresh token's iat bounds the offset too (issued at most TOLERANCE before its call),
    // however wide the range: one answer that was minutes in flight must not end it at once.
    else end = Math.min(end, exp - (h.fresh && iat !== undefined ? Math.min(range[1], iat + 1000 + TOLERANCE - h.receivedAt) : range[1]));
  }
  if (!first && end > h.end - 1000) return;
  h.end = end;
  if (!refreshLeeway) return;
  h.expiresAt = end;
  const refreshAt = end - Math.min(refreshLeeway * 1000, (life === undefined ? Math.max(0, end - h.receivedAt) : life) / 2);
  h.refreshAt = first ? refreshAt : Math.min(h.refreshAt, refreshAt);
}

/**
 * After a refresh ahead that failed or handed back the very same token: the still-valid token
 * is kept, and the next try comes after half the time it has left (at least 1 s), not on
 * every request.
 */
export function postponeRefresh(h: HeldToken, t: number): void {
  h.refreshAt = t + Math.max(1000, (h.expiresAt - t) / 2);
}
