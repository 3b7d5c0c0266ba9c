// The QA demo: the sandbox (a stand-in for the service), a demo partner backend built on
// channel-sdk/server, and a web page that uses channel-sdk by its package name.
//   npm run demo                 -> http://127.0.0.1:5173 (or the next free port)
//   PORT=8080 DEMO_TTL=60 npm run demo
// What the page shows and why: docs/guide/demo.md.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTokenExchange, createWebhookHandler, toNodeHandler } from 'channel-sdk/server';
import { startSandbox } from 'channel-sdk/testing';

const here = dirname(fileURLToPath(import.meta.url));
const WEBHOOK_SECRET = 'whsec_demo_secret';

/** Directories the page may load modules from, each resolved by package name. */
const vendor = new Map([['channel-sdk', dirname(fileURLToPath(import.meta.resolve('channel-sdk')))]]);
const types = new Map([
  ['.html', 'text/html; charset=utf-8'],
  ['.js', 'text/javascript; charset=utf-8'],
  ['.mjs', 'text/javascript; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.png', 'image/png'],
]);

/**
 * Every row of the timeline carries `at`: when it happened, in epoch ms with sub-millisecond
 * precision. The sandbox runs in this process and stamps its events with the same clock; the
 * page measures its offset to it (GET /api/clock) and stamps its own rows on this basis.
 */
const clock = () => performance.timeOrigin + performance.now();

/** `call=2.3/5` (burst 2, call 3 of 5) from a data call's query, as the page sends it. */
const callOf = (query) => (query ? (new URLSearchParams(query).get('call') ?? undefined) : undefined);
const shortPath = (path) => path.replace('/open/api/v1', '');
/** The sandbox's token number (its `jti`) from a JWT, so rows can name a token without showing it. */
const jtiOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).jti;

/**
 * Starts everything. Options: port (0 = any), ttl (token lifetime, s), aheadTtl (the short
 * lifetime of the refresh-ahead flow, s), slowReceiverMs, webhookTimeoutMs. Resolves to
 * { url, sandbox, aheadTtl, close }.
 */
export async function startDemo({
  port = 5173,
  host = '127.0.0.1',
  ttl = 900,
  aheadTtl = Math.min(20, ttl),
  slowReceiverMs = 9000,
  webhookTimeoutMs = 8000,
} = {}) {
  if (!(Number.isFinite(aheadTtl) && aheadTtl >= 4 && aheadTtl <= ttl))
    throw new RangeError(`aheadTtl must be a number of seconds from 4 to ttl (${ttl}); got ${aheadTtl}`);
  const listeners = new Set();
  const emit = (lane, kind, text, extra = {}, at = clock()) => {
    const line = `data: ${JSON.stringify({ lane, kind, text, at, ...extra })}\n\n`;
    for (const res of listeners) res.write(line);
  };

  const server = createServer((req, res) => handle(req, res));
  // Listen first: a busy port fails before anything else has started.
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => (server.off('error', reject), resolve()));
  });
  const baseUrl = `http://${host}:${server.address().port}`;

  const sandbox = await startSandbox({ tokenTtlSeconds: ttl, webhookSecret: WEBHOOK_SECRET, webhookTimeoutMs, onEvent: (e) => serviceRow(e) }).catch(
    (error) => {
      server.close();
      throw error;
    },
  );
  function serviceRow(e) {
    const at = e.at;
    if (e.type === 'token') {
      if (e.ok) emit('service', 'token-issued', `token #${e.jti} issued for ${e.externalUserId}`, { jti: e.jti }, at);
      else emit('service', 'token-refused', `token request refused: ${e.reason}`, {}, at);
    } else if (e.type === 'data') {
      const call = callOf(e.query);
      const label = call ? ` (call ${call.replace(/^\d+\./, '')})` : '';
      const kind = e.status === 401 ? 'data-401' : e.status < 300 ? 'data-ok' : 'data-error';
      // Short words, so the text wraps well in a phone-wide lane.
      const why =
        e.reason === 'token expired (expireTokens)'
          ? `token #${e.jti} expired (Expire all tokens)`
          : e.reason === 'failNext'
            ? 'answer 401 (next N calls)'
            : e.reason;
      emit(
        'service',
        kind,
        `${e.method} ${shortPath(e.path)}${label} → ${e.status}${why ? `: ${why}` : e.jti ? ` with token #${e.jti}` : ''}`,
        { status: e.status, call, jti: e.jti },
        at,
      );
    } else if (e.type === 'control') {
      // A new lifetime, from the page's flow 5 or from `channel-sandbox ttl`: a new exchange, so that
      // the next sign-in gets a token of that lifetime, not one of the old held in the backend's cache.
      if (e.action === 'ttl') exchange = createTokenExchange(exchangeOptions);
      const text =
        e.action === 'expire'
          ? 'every token issued so far now gets 401'
          : e.action === 'fail-next'
            ? `the next ${e.count} calls answer ${e.status}`
            : `tokens issued from now on live ${e.seconds} s`;
      emit('service', 'control', text, {}, at);
    } else if (e.type === 'push:sent') {
      emit(
        'service',
        'push-sent',
        `push #${e.id} ${e.orderNo}${e.tampered ? ' (body tampered after signing)' : ''} → ${new URL(e.url).pathname}`,
        { pushId: e.id },
        at,
      );
    } else if (e.type === 'push') {
      const r = e.record;
      emit(
        'service',
        r.ok ? 'push-ok' : 'push-failed',
        `push #${r.id} ${r.ok ? `delivered, HTTP ${r.status}` : `FAILED: ${r.error}`} in ${r.durationMs} ms`,
        { pushId: r.id, status: r.status },
        at,
      );
    }
  }

  // forceRefreshWindow 0: the sandbox's Expire and fail-next end tokens early, which the service
  // never does; a token a forced refresh got seconds ago may be the very one Expire just ended.
  const exchangeOptions = { baseUrl: sandbox.url, ...sandbox.credentials, forceRefreshWindow: 0 };
  let exchange = createTokenExchange(exchangeOptions);
  const served = new Map(); // user -> jti last handed out, to tell a cache hit from a new token
  const webhook = toNodeHandler(
    createWebhookHandler({
      secret: WEBHOOK_SECRET,
      onLogisticsUpdated: async ({ logistics }, { dedupKey }) => {
        emit('backend', 'push-accepted', `push received: signature ok, order ${logistics.order_no} saved (dedup key ${(await dedupKey()).slice(0, 8)}…)`);
      },
      onError: (error, info) => {
        emit(
          'backend',
          info.stage === 'signature' ? 'push-rejected' : 'push-error',
          info.stage === 'signature' ? 'push REJECTED: bad signature' : `push refused: ${info.stage} problem`,
        );
      },
    }),
  );
  /** The backend's answer to a push, as a row of its own once it is sent (or why it was not). */
  const answered = (res, started, note = '') =>
    res.on('close', () => {
      const after = `after ${Math.round(clock() - started)} ms`;
      if (!res.writableFinished) return emit('backend', 'push-answer-bad', `the service hung up ${after}, before the answer`);
      emit('backend', res.statusCode < 300 ? 'push-answer' : 'push-answer-bad', `answered HTTP ${res.statusCode}${note ? ` ${after}${note}` : ''}`, {
        status: res.statusCode,
      });
    });

  const json = (res, status, value) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(value));
  };
  let pushCount = 0;

  const routes = new Map(
    Object.entries({
      'GET /api/config': (_q, res) =>
        json(res, 200, {
          sandboxUrl: sandbox.url,
          ttl,
          aheadTtl,
          webhookTimeoutMs,
          paths: { orders: '/open/api/v1/sdk/orders', echo: '/open/api/v1/sdk/echo' },
        }),
      // The page measures its clock's offset to this one.
      'GET /api/clock': (_q, res) => json(res, 200, { now: clock() }),
      // The partner backend's token route: what the page's tokenProvider calls.
      'GET /api/channel-token': async (q, res) => {
        const user = q.get('user') ?? '';
        const force = q.get('force') === '1';
        // The fingerprint of the token a 401 just rejected: never answered with it (#29 item 8).
        const rejected = q.get('rejected') || undefined;
        const started = clock();
        try {
          const { accessToken } = await exchange.getToken(user, { forceRefresh: force, rejected });
          const jti = jtiOf(accessToken);
          const cached = served.get(user) === jti;
          served.set(user, jti);
          const took = `took ${(clock() - started).toFixed(1)} ms`;
          // Stamped when the route started (the row is a span): it shows above the token the
          // service issued for it, as cause above effect.
          if (cached) emit('backend', 'exchange-cached', `token route: token #${jti} for ${user} from the backend's cache (${took})`, { jti }, started);
          else
            emit(
              'backend',
              force ? 'exchange-forced' : 'exchange',
              `token route: exchange for ${user}${force ? ' with forceRefresh (cache bypassed)' : ''} → token #${jti} (${took})`,
              { jti },
              started,
            );
          json(res, 200, { access_token: accessToken });
        } catch (error) {
          const message = error.message.replace(/^\[channel-sdk\] /, '');
          emit('backend', 'exchange-failed', `token exchange failed: ${message}`, {}, started);
          json(res, error.code === 'CONFIG_ERROR' ? 400 : 502, { error: message });
        }
      },
      'POST /api/control/expire': (_q, res) => json(res, 200, { expired: sandbox.expireTokens() }),
      'POST /api/control/fail-next': (q, res) => {
        const n = Math.max(0, Math.min(50, Math.floor(Number(q.get('n'))) || 0));
        sandbox.failNext(n);
        json(res, 200, { n });
      },
      // The refresh-ahead flow switches to its short lifetime and back.
      'POST /api/control/ttl': (q, res) => {
        const seconds = Number(q.get('seconds'));
        if (seconds !== ttl && seconds !== aheadTtl) return json(res, 400, { error: `seconds must be ${ttl} or ${aheadTtl}` });
        if (seconds !== sandbox.tokenTtlSeconds) sandbox.setTokenTtl(seconds); // the backend's cache goes with it (serviceRow)
        json(res, 200, { ttl: seconds });
      },
      'POST /api/control/push': async (q, res) => {
        const mode = q.get('mode');
        const target = new Map([
          ['signed', '/webhooks/channel'],
          ['tampered', '/webhooks/channel'],
          ['fail', '/webhooks/fail'],
          ['slow', '/webhooks/slow'],
        ]).get(mode);
        if (!target) return json(res, 400, { error: 'mode must be signed, tampered, fail or slow' });
        const order = ['SO20240601001', 'SO20240602002'][pushCount++ % 2];
        json(res, 200, await sandbox.pushLogistics(order, { url: baseUrl + target, tamper: mode === 'tampered' }));
      },
      'POST /webhooks/channel': (_q, res, req) => {
        answered(res, clock());
        return webhook(req, res);
      },
      'POST /webhooks/fail': (_q, res, req) => {
        req.resume();
        emit('backend', 'push-error', 'push received: the receiver crashes (simulated)');
        answered(res, clock());
        res.writeHead(500).end();
      },
      'POST /webhooks/slow': (_q, res, req) => {
        req.resume();
        const started = clock();
        emit('backend', 'push-slow', `push received: the receiver takes ${slowReceiverMs} ms (the service waits ${webhookTimeoutMs} ms)`);
        answered(res, started, ' (slow)');
        const timer = setTimeout(() => res.writeHead(200).end(), slowReceiverMs);
        res.on('close', () => clearTimeout(timer));
      },
      // The page's icon is inline; a browser that asks here anyway gets "no icon", not a 404.
      'GET /favicon.ico': (_q, res) => res.writeHead(204, { 'cache-control': 'max-age=86400' }).end(),
      'GET /api/events': (_q, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
        res.write(': connected\n\n');
        listeners.add(res);
        res.on('close', () => listeners.delete(res));
      },
    }),
  );

  async function handle(req, res) {
    let url;
    try {
      url = new URL(req.url ?? '/', 'http://demo');
    } catch {
      return json(res, 400, { error: 'bad request' });
    }
    const route = routes.get(`${req.method} ${url.pathname}`);
    try {
      if (route) return await route(url.searchParams, res, req);
      if (req.method !== 'GET') return json(res, 404, { error: 'not found' });
      return await serveFile(url.pathname, res);
    } catch (error) {
      // The details go to the terminal; the browser gets no internals.
      console.error('[demo]', error);
      if (!res.headersSent) json(res, 500, { error: 'internal error (see the demo terminal)' });
      else res.end();
    }
  }

  return {
    url: baseUrl,
    sandbox,
    aheadTtl,
    close: async () => {
      for (const res of listeners) res.end();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await sandbox.close();
    },
  };
}

async function serveFile(pathname, res) {
  const [, first, name, ...rest] = pathname.split('/');
  const file =
    first === 'vendor'
      ? vendor.has(name)
        ? safeJoin(vendor.get(name), rest.join('/'))
        : undefined
      : safeJoin(join(here, 'web'), pathname === '/' ? 'index.html' : pathname.slice(1));
  if (!file) return res.writeHead(404).end();
  let body;
  try {
    body = await readFile(file);
  } catch {
    return res.writeHead(404).end();
  }
  res.writeHead(200, { 'content-type': types.get(extname(file)) ?? 'application/octet-stream', 'cache-control': 'no-store' });
  res.end(body);
}

function safeJoin(root, relative) {
  const full = normalize(join(root, relative));
  return full.startsWith(root + sep) ? full : undefined;
}

/**
 * Starts on `first`, or when it is busy on the next port up to `tries - 1` further on.
 * Resolves to the demo and the port it got; rejects with EADDRINUSE when all were busy.
 */
export async function startDemoOnFreePort(first, tries, options = {}) {
  for (let port = first; ; port++) {
    try {
      return await startDemo({ ...options, port });
    } catch (error) {
      if (error.code !== 'EADDRINUSE' || port >= first + tries - 1) throw error;
    }
  }
}

/** `npm run demo`: $PORT exactly, else 5173 or one of the nine ports after it. One line on failure. */
async function cli() {
  const ttl = Number(process.env.DEMO_TTL ?? 900);
  if (![20, 60, 900].includes(ttl)) return fail('DEMO_TTL must be 20, 60 or 900 (seconds)');
  const fixed = process.env.PORT !== undefined && process.env.PORT !== '';
  const first = fixed ? Number(process.env.PORT) : 5173;
  if (!Number.isInteger(first) || first < 0 || first > 65535) return fail('PORT must be a whole number from 0 to 65535');
  let demo;
  try {
    demo = await startDemoOnFreePort(first, fixed ? 1 : 10, { ttl });
  } catch (error) {
    if (error.code !== 'EADDRINUSE') return fail(error.message);
    return fail(
      fixed
        ? `port ${first} is in use; pick another with PORT=…, or PORT=0 for any free port`
        : `ports ${first}–${first + 9} are all in use; pick one with PORT=…, or PORT=0 for any free port`,
    );
  }
  const port = Number(new URL(demo.url).port);
  if (!fixed && port !== first) console.log(`port ${first} is busy; using ${port}`);
  console.log(`channel-sdk demo ready: open ${demo.url}
  sandbox (the service stand-in): ${demo.sandbox.url}, tokens live ${ttl} s (${demo.aheadTtl} s during the refresh-ahead flow)
Ctrl+C to stop.`);
  const stop = () => demo.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function fail(message) {
  console.error('channel-sdk demo: ' + message);
  process.exitCode = 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await cli();
