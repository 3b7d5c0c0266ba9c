import { createTokenRoute, toNodeHandler } from 'channel-sdk/server';
import express from 'express';
import { exchange, webhook } from './channel.js';
import { userIdFromCookie, userIdFromSession } from './your-app.js';

export const app = express();

// Before express.json(): the handler reads the raw body itself (up to 1 MiB) to check its signature.
app.post('/webhooks/channel', toNodeHandler(webhook));

app.use(express.json());

// Your front end's tokenProvider fetches this: GET /channel-token[?force=1] -> { access_token, ... }
// A page sends its session cookie; a mini-program has no cookies and sends x-session instead.
const tokenRoute = createTokenRoute({
  exchange,
  resolveUser: (req: express.Request) => userIdFromCookie(req.headers.cookie) ?? userIdFromSession(req.get('x-session')),
});
app.get('/channel-token', toNodeHandler(tokenRoute));

// Your other routes keep express.json().
app.post('/api/orders', (req, res) => {
  res.json({ received: req.body });
});
