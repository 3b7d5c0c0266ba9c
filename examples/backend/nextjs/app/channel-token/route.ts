// App Router: app/channel-token/route.ts. GET /channel-token[?force=1] -> { access_token, ... }
import { createTokenRoute } from 'channel-sdk/server';
import { exchange } from '@/channel';
import { userIdFromCookie } from '@/your-app';

export const GET = createTokenRoute({ exchange, resolveUser: (request) => userIdFromCookie(request.headers.get('cookie')) });
