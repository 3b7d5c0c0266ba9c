import { createTokenRoute, toNodeHandler } from 'channel-sdk/server';
import Fastify, { type FastifyRequest } from 'fastify';
import { exchange, webhook } from './channel.js';
import { userIdFromCookie } from './your-app.js';

export const app = Fastify();

// A plugin of its own: its content-type parser leaves the body unread (the handler reads the
// raw bytes to check the signature) for these routes only; the app keeps Fastify's JSON parsing.
app.register(async (channel) => {
  channel.removeAllContentTypeParsers();
  channel.addContentTypeParser('*', (_request, _payload, done) => done(null));
  channel.post('/webhooks/channel', toNodeHandler(webhook));
});

// Your front end's tokenProvider fetches this: GET /channel-token[?force=1] -> { access_token, ... }
const tokenRoute = createTokenRoute({ exchange, resolveUser: (request: FastifyRequest) => userIdFromCookie(request.headers.cookie) });
app.get('/channel-token', toNodeHandler(tokenRoute));

// Your other routes keep Fastify's JSON parsing.
app.post('/api/orders', (request, reply) => reply.send({ received: request.body }));
