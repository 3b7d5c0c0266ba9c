// app/channel-token/route.ts: GET /channel-token[?force=1] -> { access_token, token_type, expires_in }.
import { createTokenExchange, createTokenRoute } from 'channel-sdk/server';
import { userIdFromCookie } from '@/your-app';

export const GET = createTokenRoute({
  // Created at the first request, so `next build` needs no secrets; then kept (it caches tokens per user).
  exchange: () =>
    createTokenExchange({
      baseUrl: process.env.CHANNEL_BASE_URL!,
      accessKey: process.env.CHANNEL_ACCESS_KEY!,
      secretKey: process.env.CHANNEL_SECRET_KEY!,
    }),
  resolveUser: (request) => userIdFromCookie(request.headers.get('cookie')),
});
