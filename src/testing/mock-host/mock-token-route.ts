import type { WireAnswer } from './host-answers.js';
import type { MockHostStats } from './types.js';
import { fail } from '../../shared/check.js';

/** What the token route uses of its host. */
export interface TokenRouteContext {
  /** The signed-in user, or null. */
  user(): string | null;
  issue(user: string): string;
  /** The lifetime of the tokens issued now, seconds. */
  ttl(): number;
  now(): number;
  stats: MockHostStats;
}

const json = (status: number, value: unknown): WireAnswer => ({
  status,
  headers: [
    ['Content-Type', 'application/json; charset=utf-8'],
    ['Cache-Control', 'no-store'],
  ],
  body: Buffer.from(JSON.stringify(value)),
});

/**
 * The partner backend's token route as `createTokenRoute` over `createTokenExchange` answers it:
 * `{ access_token, token_type, expires_in }` for the signed-in user, the token it holds until
 * that token's own end (a backend's cache knows nothing of `expireTokens()`), a new one when
 * forced (`?force=1`, or a POST of `{"forceRefresh":true}`); 401 when nobody is signed in.
 */
export function createTokenRoute(where: string | false, c: TokenRouteContext) {
  if (where !== false && (typeof where !== 'string' || !/^(https?:\/\/[^/]+)?\/\S*$/.test(where)))
    fail("createMockHost tokenRoute must be a path ('/channel-token'), a URL ('https://partner.example.com/channel-token') or false");
  const target = where === false ? undefined : where.startsWith('/') ? { path: where } : { path: new URL(where).pathname, origin: new URL(where).origin };
  const held = new Map<string, { token: string; endsAt: number }>();

  return {
    matches: (url: URL) => !!target && url.pathname === target.path && (!target.origin || target.origin === url.origin),
    describe: () => (target ? [`the token route ${where as string}`] : []),
    answer(method: string, url: URL, body: Uint8Array): WireAnswer {
      if (method !== 'GET' && method !== 'POST') return json(405, { error: 'use GET (or POST)' });
      let forced = url.searchParams.get('force') === '1';
      if (method === 'POST') {
        try {
          forced ||= (JSON.parse(Buffer.from(body).toString('utf8') || '{}') as { forceRefresh?: unknown }).forceRefresh === true;
        } catch {
          return json(400, { error: 'the body must be JSON, e.g. {"forceRefresh":true}' });
        }
      }
      const user = c.user();
      if (user === null) return json(401, { error: 'not signed in (host.user is null)' });
      c.stats.tokenRouteCalls++;
      if (forced) c.stats.forcedRefreshes++;
      let entry = held.get(user);
      if (forced || !entry || entry.endsAt <= c.now()) {
        entry = { token: c.issue(user), endsAt: c.now() + c.ttl() * 1000 };
        held.set(user, entry);
      }
      return json(200, { access_token: entry.token, token_type: 'Bearer', expires_in: Math.max(0, Math.round((entry.endsAt - c.now()) / 1000)) });
    },
  };
}
