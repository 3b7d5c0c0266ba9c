// src/channel-client.ts: one client for the page. Its token comes from your backend's token route
// on the page's own origin (vite.config.ts proxies it in development; serve both from one origin
// in production), which knows the user by the session cookie.
import { createClient } from 'channel-sdk';

export const client = createClient({
  baseUrl: import.meta.env.VITE_CHANNEL_BASE_URL, // the service: the sandbox's URL while you try it
  tokenProvider: async ({ forceRefresh, rejected, signal }) => {
    const r = await fetch('/channel-token' + (forceRefresh ? '?force=1&rejected=' + (rejected || '') : ''), {
      credentials: 'include',
      ...(signal ? { signal } : {}),
    });
    if (!r.ok) throw new Error(`token route answered HTTP ${r.status}` + (r.status === 401 ? ': nobody is signed in' : ''));
    return ((await r.json()) as { access_token: string }).access_token;
  },
});
