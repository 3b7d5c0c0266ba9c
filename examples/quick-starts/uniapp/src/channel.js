// src/channel.js: one client for the whole app. While you try it the service is the sandbox and your
// backend runs on this machine (WeChat DevTools: tick "Does not verify valid domain names").
import { createClient, hostTokenStore } from 'channel-sdk/miniprogram';

const SERVICE_URL = 'http://127.0.0.1:8787'; // in production: your service's https URL, allow-listed
const BACKEND_URL = 'http://127.0.0.1:3000'; // in production: your backend's

// What your login keeps. The stand-in: the session the example backend knows (your-app.ts: user-1).
export const session = { id: 'demo-session', userId: 'user-1' };

export const client = createClient({
  baseUrl: SERVICE_URL,
  tokenProvider: ({ forceRefresh, rejected }) =>
    new Promise((resolve, reject) =>
      uni.request({
        url: BACKEND_URL + '/channel-token' + (forceRefresh ? '?force=1&rejected=' + (rejected || '') : ''),
        header: { 'x-session': session.id }, // a mini-program sends no cookies: the token route reads x-session
        success: (r) => (r.statusCode === 200 ? resolve(r.data.access_token) : reject(new Error('token route answered ' + r.statusCode))),
        fail: (e) => reject(new Error(e.errMsg)),
      }),
    ),
  tokenStore: hostTokenStore({ key: () => session.userId }), // a cold start reuses the token while it lasts
});
