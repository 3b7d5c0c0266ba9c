// The partner backend doctor.integration.test.ts runs in a process of its own (bundled by the test,
// the packages left to node_modules, `channel-sdk/server` the built package):
// - the README's Express backend as it is (examples/backend/express.ts: /channel-token, and
//   /webhooks/channel, a receiver without dedup), the README's inbox receiver
//   (examples/backend/webhook-inbox.ts at /webhooks/inbox, prefix myapp:) and its worker;
// - under /fault/<name>/, token routes and receivers with one fault each, built on the package's
//   own helpers so that everything else about them is right. Each session cookie value is a user of
//   its own, so that runs at once do not share a cache.
// Environment: CHANNEL_BASE_URL, CHANNEL_ACCESS_KEY, CHANNEL_SECRET_KEY, CHANNEL_WEBHOOK_SECRET,
// REDIS_URL, SKEWED_BASE_URL (a sandbox whose clock is off). Prints `listening on <url>`.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTokenExchange, createTokenRoute, createWebhookHandler, toNodeHandler } from 'channel-sdk/server';
import express from 'express';
import { app } from '../../../examples/backend/express.js';
import { webhook } from '../../../examples/backend/channel.js';
import { echoes } from './doctor-echoes.js';
import { startWorker, webhook as inboxWebhook } from '../../../examples/backend/webhook-inbox.js';

const env = process.env as Record<string, string>;
const keys = { accessKey: env.CHANNEL_ACCESS_KEY, secretKey: env.CHANNEL_SECRET_KEY };
const exchange = (o: { baseUrl?: string; accessKey?: string; secretKey?: string } = {}) =>
  createTokenExchange({ baseUrl: env.CHANNEL_BASE_URL, ...keys, ...o });
// A user per session, named apart from the session id (which doctor masks wherever it appears).
const user = (req: Request) => {
  const session = /(?:^|;\s*)session=([\w-]+)/.exec(req.headers.get('cookie') ?? '')?.[1];
  return session && 'user-' + createHash('sha256').update(session).digest('hex').slice(0, 8);
};
const route = (source: ReturnType<typeof exchange> | Parameters<typeof createTokenRoute>[0]['exchange']) =>
  createTokenRoute({ exchange: source, resolveUser: user });

type Fetch = (request: Request) => Promise<Response>;

/** A healthy token route whose answers `change` rewrites, or whose requests it rewrites first. */
function altered(change: { answer?: (answer: Response, request: Request) => Promise<Response>; request?: (request: Request) => Request }): Fetch {
  const healthy = route(exchange());
  return async (request) => {
    const answer = await healthy(change.request ? change.request(request) : request);
    return change.answer ? change.answer(answer, request) : answer;
  };
}
/** The answer's JSON `{ access_token, … }` rewritten by `shape`. */
const reshaped = (shape: (body: Record<string, unknown>) => unknown) =>
  altered({
    answer: async (answer) =>
      answer.status === 200
        ? new Response(JSON.stringify(shape((await answer.json()) as Record<string, unknown>)), { status: 200, headers: answer.headers })
        : answer,
  });

const ok = exchange();
const tokenRoutes: Record<string, Fetch> = {
  ok: route(ok),
  // force ignored: the exchange is asked for the cached token whatever the route was asked.
  'cached-force': route({ getToken: (id: string) => ok.getToken(id) }),
  // force honoured, `rejected` dropped: within forceRefreshWindow the token just forced comes back.
  rejected: route(
    (() => {
      const own = exchange();
      return { getToken: (id: string, o?: { forceRefresh?: boolean }) => own.getToken(id, { forceRefresh: !!o?.forceRefresh }) };
    })(),
  ),
  'token-shape': reshaped((body) => ({ token: body.access_token })),
  envelope: reshaped((body) => ({ code: 0, message: 'ok', data: body })),
  // A browser's cross-site headers taken off before the route sees them: it cannot refuse such a request.
  'no-cross-site': altered({
    request: (request) => {
      const headers = new Headers(request.headers);
      for (const name of ['origin', 'sec-fetch-site', 'sec-fetch-mode', 'sec-fetch-dest']) headers.delete(name);
      return new Request(request.url, { method: request.method, headers, body: request.body, duplex: 'half' } as RequestInit);
    },
  }),
  // Every origin granted, cookies included: any site reads its visitors' tokens.
  'cors-any-origin': altered({
    answer: async (answer, request) => {
      const headers = new Headers(answer.headers);
      headers.set('access-control-allow-origin', request.headers.get('origin') ?? '*');
      headers.set('access-control-allow-credentials', 'true');
      return new Response(answer.body, { status: answer.status, headers });
    },
  }),
  'wrong-access-key': route(exchange({ accessKey: 'ak_not_this_one' })),
  'wrong-secret-key': route(exchange({ secretKey: 'sk_not_this_one_either' })),
  skewed: route(exchange({ baseUrl: env.SKEWED_BASE_URL })),
  // An error answer that echoes the request's cookie and a token: doctor must print neither.
  leaky: async (request) => {
    const { accessToken } = await ok.getToken('leaky');
    const body = JSON.stringify({ error: 'no session for ' + request.headers.get('cookie'), debug: accessToken });
    return new Response(body, { status: 500, headers: { 'content-type': 'application/json' } });
  },
  // Error answers that echo the cookie another way: cut by doctor's 120-character limit just after
  // its start, URL-encoded, as hex, as base64 (standard and URL-safe) at each of the 3 offsets.
  ...Object.fromEntries(
    Object.entries(echoes).map(([name, echo]) => [
      'leaky-' + name,
      async (request: Request) => new Response(echo(request.headers.get('cookie') ?? ''), { status: 500, headers: { 'content-type': 'text/plain' } }),
    ]),
  ),
};
// The README's Express receiver mounted below app.use(express.json()), which reads the body first.
const parsedFirst = express();
parsedFirst.use(express.json());
parsedFirst.post('/fault/parsed-first/webhooks/channel', toNodeHandler(webhook));
const receivers: Record<string, ReturnType<typeof toNodeHandler>> = {
  'other-secret': toNodeHandler(createWebhookHandler({ secret: 'whsec_another_secret', onLogisticsUpdated: () => {} })),
  // The recipes' secret read from an environment that lacks it (CHANNEL_WEBHOOK_SECRET not set in production).
  'no-secret': toNodeHandler(createWebhookHandler({ secret: () => undefined, onLogisticsUpdated: () => {} })),
  'parsed-first': (req, res) => parsedFirst(req as IncomingMessage, res as ServerResponse),
  // Refuses every push naming the secret it verifies with (the one doctor was given), where doctor cuts the answer.
  'leaky-cut': async (req, res) => {
    (req as IncomingMessage).resume();
    await new Promise((resolve) => (req as IncomingMessage).on('end', resolve));
    (res as ServerResponse).writeHead(401).end(echoes.cut(env.CHANNEL_WEBHOOK_SECRET));
  },
};

/** A Fetch route on node:http, as a partner's framework would mount it. */
async function serveFetch(handler: Fetch, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  const body = chunks.length ? Buffer.concat(chunks) : undefined;
  const answer = await handler(new Request('http://' + req.headers.host + req.url, { method: req.method, headers, body }));
  res.writeHead(answer.status, Object.fromEntries(answer.headers));
  res.end(Buffer.from(await answer.arrayBuffer()));
}

const inbox = toNodeHandler(inboxWebhook);
startWorker(async () => {});
const server = createServer((req, res) => {
  const [, fault, name, ...rest] = (req.url ?? '/').split('?')[0].split('/');
  const path = rest.join('/');
  if (req.url?.startsWith('/webhooks/inbox')) return void inbox(req, res);
  if (fault === 'fault' && path === 'channel-token' && tokenRoutes[name]) return void serveFetch(tokenRoutes[name], req, res);
  if (fault === 'fault' && path === 'webhooks/channel' && receivers[name]) return void receivers[name](req, res);
  app(req, res);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
