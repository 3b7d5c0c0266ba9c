// Pages Router: pages/api/channel-token.ts. GET /api/channel-token[?force=1] -> { access_token, ... }
import { createTokenRoute, toNodeHandler } from 'channel-sdk/server';
import type { NextApiRequest } from 'next';
import { exchange } from '@/channel';
import { userIdFromCookie } from '@/your-app';

export default toNodeHandler(createTokenRoute({ exchange, resolveUser: (req: NextApiRequest) => userIdFromCookie(req.headers.cookie) }));
