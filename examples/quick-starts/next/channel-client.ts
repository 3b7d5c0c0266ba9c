// channel-client.ts: one client for the pages. Its token comes from app/channel-token/route.ts on
// the same origin, which knows the user by the session cookie.
import { createClient } from 'channel-sdk';

export const client = createClient({
  baseUrl: process.env.NEXT_PUBLIC_CHANNEL_BASE_URL!, // the service: the sandbox's URL while you try it (read at build time)
  tokenProvider: async ({ forceRefresh, rejected, signal }) => {
    const r = await fetch('/channel-token' + (forceRefresh ? '?force=1&rejected=' + (rejected || '') : ''), {
      credentials: 'include',
      ...(signal ? { signal } : {}),
    });
    if (!r.ok) throw new Error(`token route answered HTTP ${r.status}` + (r.status === 401 ? ': nobody is signed in' : ''));
    return ((await r.json()) as { access_token: string }).access_token;
  },
});
