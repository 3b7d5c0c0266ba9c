import { Router } from '@koa/router';
import { createTokenRoute, toNodeHandler } from 'channel-sdk/server';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import { exchange, webhook } from './channel.js';
import { userIdFromCookie } from './your-app.js';

export const app = new Koa();

const channel = new Router();
channel.post('/webhooks/channel', toNodeHandler(webhook));
// Your front end's tokenProvider fetches this: GET /channel-token[?force=1] -> { access_token, ... }
const tokenRoute = createTokenRoute({ exchange, resolveUser: (ctx: Koa.Context) => userIdFromCookie(ctx.get('cookie')) });
channel.get('/channel-token', toNodeHandler(tokenRoute));
// Before the body parser: the webhook handler reads the raw body itself to check its signature.
app.use(channel.routes());

app.use(bodyParser());

// Your other routes keep the body parser.
const api = new Router();
api.post('/api/orders', (ctx) => {
  ctx.body = { received: ctx.request.body };
});
app.use(api.routes());
