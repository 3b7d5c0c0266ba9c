import { createDataRoute } from './data-routes.js';
import { createEventLog } from './event-log.js';
import { createFileStore } from './file-routes.js';
import { createOrderStore } from './orders.js';
import { createJwtSigner } from './sandbox-jwt.js';
import { checkTtl } from './sandbox-options.js';
import type { FailNextOptions, SandboxEvent, SandboxStats, TokenVerdict } from './types.js';
import { fail } from '../../shared/check.js';

const ISSUER = 'channel-sandbox';

/**
 * What the service holds, apart from how calls reach it: the tokens it issued and accepts (its
 * JWT key, expiry, `expireTokens`, `failNext`), its orders and photos, its counters and events,
 * and the data routes over them. The sandbox serves it over HTTP; a mock host calls it in process.
 */
export function createServiceState(options: { now: () => number; clock: () => number; tokenTtlSeconds: number }) {
  const { now } = options;
  let tokenTtlSeconds = checkTtl(options.tokenTtlSeconds);
  const events = createEventLog(options.clock);
  const jwt = createJwtSigner(ISSUER);
  const orders = createOrderStore(now);
  const files = createFileStore((orderNo) => orders.get(orderNo) !== undefined);
  const stats: SandboxStats = { tokenCalls: 0, tokensIssued: 0, tokenRejections: 0, dataCalls: 0, unauthorized: 0, pushes: 0, pushFailures: 0 };
  let issued = 0;
  let expiredUpTo = 0; // tokens with jti <= this are expired
  const failing = { count: 0, status: 401, retryAfterSeconds: undefined as number | undefined };

  function issue(externalUserId: string, via: 'endpoint' | 'direct'): string {
    const iat = Math.floor(now() / 1000);
    const jti = String(++issued);
    stats.tokensIssued++;
    events.emit({ type: 'token', ok: true, externalUserId, jti, via });
    return jwt.sign({ sub: externalUserId, iss: ISSUER, iat, exp: iat + tokenTtlSeconds, jti });
  }

  /** A token checked as the data routes check it. */
  function verifyToken(token: string): TokenVerdict {
    if (typeof token !== 'string') fail('verifyToken needs the JWT string');
    const check = jwt.verify(token, Math.floor(now() / 1000));
    if (!check.claims) return { valid: false, reason: check.reason };
    const { sub, iat, exp, jti } = check.claims;
    if (Number(jti) <= expiredUpTo) return { valid: false, reason: 'token expired (expireTokens)', claims: { sub, iat, exp, jti } };
    return { valid: true, claims: { sub, iat, exp, jti } };
  }

  /** The token's jti when its Bearer token is good, else why not (the hot path: no copy of the claims). */
  function checkBearer(auth: string | undefined): { reason?: string; jti?: string } {
    if (!auth) return { reason: 'missing Authorization header' };
    const check = auth.startsWith('Bearer ') ? jwt.verify(auth.slice(7), Math.floor(now() / 1000)) : { reason: 'not a JWT' };
    if (!check.claims) return { reason: check.reason === 'not a JWT' ? 'not a Bearer JWT (a console login token is not accepted)' : check.reason };
    const jti = check.claims.jti;
    if (Number(jti) <= expiredUpTo) return { reason: 'token expired (expireTokens)', jti };
    return { jti };
  }

  return {
    events,
    stats,
    orders,
    issue,
    verifyToken,
    /** The data routes: `answer` a call, or `admit` and `record` one that a mock host's own route answers. */
    data: createDataRoute({ stats, events, orders, files, failing, checkBearer }),
    /** Every token issued so far now gets 401; returns how many that is. */
    expireTokens(): number {
      expiredUpTo = issued;
      events.emit({ type: 'control', action: 'expire', expired: issued });
      return issued;
    },
    failNext(count: number, o: FailNextOptions = {}): void {
      failing.count = Math.max(0, Math.floor(count));
      failing.status = o.status ?? 401;
      failing.retryAfterSeconds = o.retryAfterSeconds;
      events.emit({ type: 'control', action: 'fail-next', count: failing.count, status: failing.status });
    },
    setTokenTtl(seconds: number): void {
      tokenTtlSeconds = checkTtl(seconds);
      events.emit({ type: 'control', action: 'ttl', seconds });
    },
    get tokenTtlSeconds() {
      return tokenTtlSeconds;
    },
    /** What control's `stats` reports about failNext. */
    get failing(): Readonly<typeof failing> {
      return failing;
    },
    subscribe: (listener: (event: SandboxEvent) => void) => events.subscribe(listener),
  };
}

export type ServiceState = ReturnType<typeof createServiceState>;
