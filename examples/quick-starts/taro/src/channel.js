// src/channel.js: one client for the whole app. While you try it the service is the sandbox and your
// backend runs on this machine (WeChat DevTools: tick "Does not verify valid domain names").
import Taro from '@tarojs/taro';
import { createClient, hostTokenStore } from 'channel-sdk/miniprogram';

const SERVICE_URL = 'http://127.0.0.1:8787'; // in production: your service's https URL, allow-listed
const BACKEND_URL = 'http://127.0.0.1:3000'; // in production: your backend's

// What your login keeps. The stand-in: the session the example backend knows (your-app.ts: user-1).
export const session = { id: 'demo-session', userId: 'user-1' };

export const client = createClient({
  baseUrl: SERVICE_URL,
  tokenProvider: async ({ forceRefresh, rejected }) => {
    const r = await Taro.request({
      url: BACKEND_URL + '/channel-token' + (forceRefresh ? '?force=1&rejected=' + (rejected || '') : ''),
      header: { 'x-session': session.id }, // a mini-program sends no cookies: the token route reads x-session
    });
    if (r.statusCode !== 200) throw new Error('token route answered ' + r.statusCode);
    return r.data.access_token;
  },
  tokenStore: hostTokenStore({ key: () => session.userId }), // a cold start reuses the token while it lasts
});
