import { createTokenRoute } from 'channel-sdk/server';
import { Hono, type Context } from 'hono';
import { exchange, webhook } from './channel.js';
import { userIdFromCookie } from './your-app.js';

export const app = new Hono();

// The handler takes Hono's context and reads the raw body itself: no middleware may read it first.
app.post('/webhooks/channel', webhook);

// Your front end's tokenProvider fetches this: GET /channel-token[?force=1] -> { access_token, ... }
app.get('/channel-token', createTokenRoute({ exchange, resolveUser: (c: Context) => userIdFromCookie(c.req.header('cookie')) }));

// Your other routes read their bodies as usual.
app.post('/api/orders', async (c) => c.json({ received: await c.req.json() }));
