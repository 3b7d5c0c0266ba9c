// The QA demo: the sandbox (a stand-in for the service), a demo partner backend built on
// channel-sdk/server, and a web page that uses channel-sdk by its package name.
//   npm run demo                 -> http://127.0.0.1:5173
//   PORT=8080 DEMO_TTL=900 npm run demo
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTokenExchange, createWebhookHandler, toNodeHandler } from 'channel-sdk/server';
import { demoLogistics, startSandbox } from 'channel-sdk/testing';

const here = dirname(fileURLToPath(import.meta.url));
const WEBHOOK_SECRET = 'whsec_demo_secret';

/** Directories the page may load modules from, each resolved by package name. */
const vendor = {
  'channel-sdk': dirname(fileURLToPath(import.meta.resolve('channel-sdk'))),
};
const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.png': 'image/png' };

/**
 * Starts everything. Options: port (0 = any), ttl (token lifetime, s), slowReceiverMs,
 * webhookTimeoutMs. Resolves to { url, sandbox, close }.
 */
export async function startDemo({ port = 5173, host = '127.0.0.1', ttl = 60, slowReceiverMs = 9000, webhookTimeoutMs = 8000 } = {}) {
  const listeners = new Set();
  const emit = (lane, kind, text, extra = {}) => {
    const line = `data: ${JSON.stringify({ lane, kind, text, at: Date.now(), ...extra })}\n\n`;
    for (const res of listeners) res.write(line);
  };

  let baseUrl = '';
  const sandbox = await startSandbox({
    tokenTtlSeconds: ttl,
    webhookSecret: WEBHOOK_SECRET,
    webhookTimeoutMs,
    onEvent: (e) => {
      if (e.type === 'token') {
        if (e.ok) emit('service', 'token-issued', `token #${e.jti} issued for ${e.externalUserId}`);
        else emit('service', 'token-refused', `token request refused: ${e.reason}`);
      } else if (e.type === 'data') {
        emit('service', e.status === 401 ? 'data-401' : 'data-ok', `${e.method} ${e.path} -> ${e.status}${e.reason ? ` (${e.reason})` : e.jti ? ` with token #${e.jti}` : ''}`, { status: e.status });
      } else {
        const r = e.record;
        emit('service', r.ok ? 'push-ok' : 'push-failed', `push #${r.id} ${r.tampered ? '(tampered) ' : ''}-> ${r.ok ? `delivered, HTTP ${r.status}` : `FAILED: ${r.error}`} in ${r.durationMs} ms`);
      }
    },
  });

  const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
  const webhook = toNodeHandler(
    createWebhookHandler({
      secret: WEBHOOK_SECRET,
      onLogisticsUpdated: async ({ logistics }, { dedupKey }) => {
        emit('backend', 'push-accepted', `push received: signature ok, order ${logistics.order_no} (dedup key ${(await dedupKey()).slice(0, 8)}…)`);
      },
      onError: (error, info) => {
        emit('backend', info.stage === 'signature' ? 'push-rejected' : 'push-error', `push ${info.stage === 'signature' ? 'REJECTED: bad signature' : `${info.stage} problem`} -> ${info.status ?? 'warning'}`);
      },
    }),
  );

  const json = (res, status, value) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };

  const routes = {
    'GET /api/config': (_q, res) => json(res, 200, { sandboxUrl: sandbox.url, ttl, paths: { orders: '/open/api/v1/sdk/orders', echo: '/open/api/v1/sdk/echo' } }),
    // The partner backend's token route: what the page's tokenProvider calls.
    'GET /api/channel-token': async (q, res) => {
      const user = q.get('user') ?? '';
      const force = q.get('force') === '1';
      const started = Date.now();
      try {
        const { accessToken } = await exchange.getToken(user, { forceRefresh: force });
        emit('backend', force ? 'exchange-forced' : 'exchange', `token exchange for ${user}${force ? ' (forceRefresh: bypassing the cache)' : ''} in ${Date.now() - started} ms`);
        json(res, 200, { access_token: accessToken });
      } catch (error) {
        emit('backend', 'exchange-failed', `token exchange failed: ${error.message}`);
        json(res, error.code === 'CONFIG_ERROR' ? 400 : 502, { error: error.message });
      }
    },
    'POST /api/control/expire': (_q, res) => {
      sandbox.expireTokens();
      emit('service', 'control', 'every token issued so far now gets 401');
      json(res, 200, { ok: true });
    },
    'POST /api/control/fail-next': (q, res) => {
      const n = Math.max(0, Math.min(50, Number(q.get('n')) || 0));
      sandbox.failNext(n);
      emit('service', 'control', `the next ${n} calls answer 401`);
      json(res, 200, { ok: true, n });
    },
    'POST /api/control/push': async (q, res) => {
      const mode = q.get('mode');
      const target = { signed: '/webhooks/channel', tampered: '/webhooks/channel', fail: '/webhooks/fail', slow: '/webhooks/slow' }[mode];
      if (!target) return json(res, 400, { error: 'mode must be signed, tampered, fail or slow' });
      const logistics = demoLogistics[Math.floor(Math.random() * demoLogistics.length)];
      emit('service', 'push-sent', `push logistics.updated for ${logistics.order_no}${mode === 'tampered' ? ' (body tampered after signing)' : ''} -> ${target}`);
      json(res, 200, await sandbox.pushLogistics(logistics, { url: baseUrl + target, tamper: mode === 'tampered' }));
    },
    'POST /webhooks/channel': (_q, res, req) => webhook(req, res),
    'POST /webhooks/fail': (_q, res, req) => {
      req.resume();
      emit('backend', 'push-error', 'receiver answered 500 (simulated crash)');
      res.writeHead(500).end();
    },
    'POST /webhooks/slow': (_q, res, req) => {
      req.resume();
      emit('backend', 'push-slow', `receiver is taking ${slowReceiverMs} ms (the service waits 8 s)`);
      setTimeout(() => res.writeHead(200).end(), slowReceiverMs);
    },
    'GET /api/events': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
      res.write(': connected\n\n');
      listeners.add(res);
      res.on('close', () => listeners.delete(res));
    },
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://demo');
    const route = routes[`${req.method} ${url.pathname}`];
    try {
      if (route) return await route(url.searchParams, res, req);
      if (req.method !== 'GET') return json(res, 404, { error: 'not found' });
      return await serveFile(url.pathname, res);
    } catch (error) {
      if (!res.headersSent) json(res, 500, { error: error.message });
    }
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  baseUrl = `http://${host}:${server.address().port}`;
  return {
    url: baseUrl,
    sandbox,
    close: async () => {
      for (const res of listeners) res.end();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await sandbox.close();
    },
  };
}

async function serveFile(pathname, res) {
  let file;
  const [, first, ...rest] = pathname.split('/');
  if (first === 'vendor' && vendor[rest[0]]) file = safeJoin(vendor[rest[0]], rest.slice(1).join('/'));
  else file = safeJoin(join(here, 'web'), pathname === '/' ? 'index.html' : pathname.slice(1));
  if (!file) return res.writeHead(404).end();
  try {
    const body = await readFile(file);
    res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    res.end(body);
  } catch {
    res.writeHead(404).end();
  }
}

function safeJoin(root, relative) {
  const full = normalize(join(root, relative));
  return full === root || full.startsWith(root + sep) ? full : undefined;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const demo = await startDemo({ port: Number(process.env.PORT ?? 5173), ttl: Number(process.env.DEMO_TTL ?? 60) });
  console.log(`channel-sdk demo ready: open ${demo.url}
  sandbox (the service stand-in): ${demo.sandbox.url}, tokens live ${process.env.DEMO_TTL ?? 60} s
Ctrl+C to stop.`);
  const stop = () => demo.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
