import { TokenProviderError } from '../errors/TokenProviderError.js';
import { describe, messageOf } from './check.js';
import { decodePayload, jwtShape, lifetimeMs } from './jwt.js';
import type { Redactor } from './redact.js';
import { abortError, cleared } from './signal.js';
import type { SignalLike, TokenProvider, TokenReason } from './types.js';

/** A token as the client holds it. `version` grows by one with every token installed. */
export interface HeldToken {
  readonly token: string;
  readonly version: number;
  /** Local epoch ms after which the token is treated as expired; Infinity when unknown. */
  readonly expiresAt: number;
  /** Local epoch ms from which a refresh ahead of expiry starts; Infinity when none. */
  refreshAt: number;
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
}

export interface TokenManager {
  /** The token to send now: the held one when usable (synchronously), else a shared provider call. */
  get(): HeldToken | Promise<HeldToken>;
  /** After a 401 on `version`: a newer held token if there is one, else one shared forced refresh. */
  afterUnauthorized(version: number): HeldToken | Promise<HeldToken>;
  /** A forced provider call (shared with any forced call in flight). */
  refresh(reason: TokenReason): Promise<HeldToken>;
  /**
   * Forgets the held token. Provider calls already in flight install nothing: whoever waits
   * on them gets an AbortError (a token asked for before a logout is never handed out).
   */
  clear(): void;
}

interface Flight {
  promise: Promise<HeldToken>;
  forced: boolean;
}

const noop = () => {};

export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const { now, refreshLeeway } = options;
  let held: HeldToken | undefined;
  let version = 0;
  let calls = 0; // provider calls started
  let installedCall = 0; // the call whose token is held
  let epoch = 0; // bumped by clear()
  let flight: Flight | undefined;

  function call(forced: boolean, reason: TokenReason): Promise<HeldToken> {
    const id = ++calls;
    const callEpoch = epoch;
    const startedAt = now();
    const promise = invoke(forced)
      .then((value) => {
        if (callEpoch !== epoch) throw abortError({ reason: cleared } as SignalLike, {});
        const token = check(value);
        // A slower call that started earlier must not replace a newer token.
        if (id < installedCall && held) return held;
        installedCall = id;
        held = hold(token, startedAt);
        options.onToken(reason, held);
        return held;
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
    if (lifetime === undefined) return { token, version: ++version, expiresAt: Infinity, refreshAt: Infinity };
    // Counted from the local time the provider was asked (never later than the token's issue),
    // with the token's own exp - iat: a device clock set wrong does not matter.
    const expiresAt = receivedAt + lifetime;
    return { token, version: ++version, expiresAt, refreshAt: expiresAt - Math.min(refreshLeeway * 1000, lifetime / 2) };
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
      held = undefined;
      epoch++;
      flight = undefined;
    },
  };
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
