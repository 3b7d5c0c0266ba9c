import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { checkKeys, fail } from '../../shared/check.js';
import type { Logistics } from '../../schemas/logistics.js';
import { TOKEN_PATH } from '../../server/tokens/exchange-options.js';
import { CONTROL_PREFIX, handleControl } from './control.js';
import { MAX_UPLOAD_BYTES, readUpload } from './file-routes.js';
import { answerPreflight, corsHeaders, MAX_BODY_BYTES, readBody, sendJson } from '../http-io.js';
import { createPusher } from './push.js';
import { SANDBOX_CODES, SANDBOX_PATHS } from './sandbox-api.js';
import { checkControlHosts, OPTION_KEYS } from './sandbox-options.js';
import { createServiceState } from './service-state.js';
import { createTokenEndpoint } from './token-endpoint.js';
import type { PushOptions, Sandbox, SandboxOptions } from './types.js';

export { SANDBOX_CODES, SANDBOX_PATHS } from './sandbox-api.js';

const systemClock = () => performance.timeOrigin + performance.now();

/**
 * Starts a local emulation of the service on node:http: the token endpoint (reference
 * signature, ±300 s window, nonce replay refused, body rules), real HS256 JWTs, Bearer-protected
 * data routes, signed logistics pushes with the 8-second window, and the sandbox's own control
 * API under `/__sandbox/` (what the `channel-sandbox` CLI drives).
 * @example
 * const sandbox = await startSandbox({ tokenTtlSeconds: 60, webhookUrl, webhookSecret: 'whsec' });
 * const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  checkKeys(options ?? {}, OPTION_KEYS, 'startSandbox option');
  const { port = 0, host = '127.0.0.1', webhookSecret = '', webhookTimeoutMs = 8000, controlApi = 'loopback' } = options;
  const controlHosts = checkControlHosts(options.controlHosts);
  const now = options.now ?? Date.now;
  if (!['loopback', 'any', 'off'].includes(controlApi)) fail("controlApi must be 'loopback', 'any' or 'off'");
  const credentials = options.credentials ?? {
    accessKey: 'ak_sandbox_' + randomBytes(4).toString('hex'),
    secretKey: 'sk_sandbox_' + randomBytes(16).toString('hex'),
  };
  const service = createServiceState({ now, clock: options.now ?? systemClock, tokenTtlSeconds: options.tokenTtlSeconds ?? 900 });
  const { events, stats, orders } = service;
  const pusher = createPusher({ secret: webhookSecret, timeoutMs: webhookTimeoutMs, defaultUrl: options.webhookUrl, events });
  events.subscribe((event) => {
    if (event.type !== 'push') return;
    stats.pushes++;
    if (!event.record.ok) stats.pushFailures++;
  });
  if (options.onEvent) events.subscribe(options.onEvent); // after the counters, so it sees them updated

  const tokenEndpoint = createTokenEndpoint({ stats, events, credentials, now, issue: service.issue, ttl: () => service.tokenTtlSeconds });

  const server = createServer((req, res) => {
    // The clock its tokens are issued and checked by, as the service's Date header carries it.
    res.setHeader('date', new Date(now()).toUTCString());
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q + 1);
    if (path.startsWith(CONTROL_PREFIX) && controlApi !== 'off') {
      return void handleControl(req, res, path, new URLSearchParams(query), {
        sandbox,
        events,
        mode: controlApi,
        hosts: controlHosts,
        defaultOrder: orders.list()[0].order_no,
        addListener: pusher.addListener,
        report: pusher.report,
        state: () => ({
          tokenTtlSeconds: service.tokenTtlSeconds,
          failNext: { count: service.failing.count, status: service.failing.status },
          webhookUrl: options.webhookUrl ?? null,
          listeners: pusher.listening(),
        }),
      });
    }
    const isToken = path === TOKEN_PATH;
    // The token endpoint gets no CORS headers: a page that could call it would hold the AK/SK.
    if (req.method === 'OPTIONS' && !isToken) return answerPreflight(req, res);
    const isUpload = path === SANDBOX_PATHS.photos;
    const route = async (body: Buffer | undefined) => {
      if (!body) {
        const message = isUpload ? 'photo larger than 10 MiB' : 'body larger than 1 MiB';
        return sendJson(res, 413, { code: SANDBOX_CODES.tooLarge, message }, isToken ? {} : corsHeaders);
      }
      if (isToken) return tokenEndpoint(req, body, res);
      const upload = isUpload ? await readUpload(body, req.headers['content-type']) : undefined;
      const origin = 'http://' + (req.headers.host ?? `${host}:${address.port}`);
      const answer = service.data.answer({ method: req.method ?? 'GET', path, query, origin, authorization: req.headers.authorization, body, upload });
      res.writeHead(answer.status, {
        ...corsHeaders,
        ...answer.headers,
        'content-length': String(typeof answer.body === 'string' ? Buffer.byteLength(answer.body) : answer.body.length),
      });
      res.end(answer.body);
    };
    const failed = (error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { code: 50000, message: 'sandbox error: ' + (error as Error).message });
    };
    const body = readBody(req, isUpload ? MAX_UPLOAD_BYTES : MAX_BODY_BYTES);
    // A bodiless request (a GET) is answered in this turn, without waiting on a promise.
    if (Buffer.isBuffer(body)) return void route(body).catch(failed);
    body.then(route, () => res.destroy()).catch(failed);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;

  async function pushLogistics(target: Logistics | string, o: PushOptions = {}) {
    if (o.fresh && typeof target !== 'string')
      fail('pushLogistics: fresh takes an order number (the sandbox makes its new snapshot); to push logistics of your own, change them yourself');
    const logistics = typeof target === 'string' ? (o.fresh ? orders.snapshot(target) : orders.logistics(target)) : target;
    if (!logistics)
      fail(
        'no order ' +
          target +
          '; the sandbox has ' +
          orders
            .list()
            .map((order) => order.order_no)
            .slice(0, 5)
            .join(', '),
      );
    try {
      return await pusher.push(logistics, { url: o.url, tamper: o.tamper });
    } catch (error) {
      fail((error as Error).message);
    }
  }

  const sandbox: Sandbox = {
    url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
    credentials,
    issueToken: async (externalUserId) => service.issue(externalUserId, 'direct'),
    verifyToken: service.verifyToken,
    expireTokens: service.expireTokens,
    failNext: service.failNext,
    setTokenTtl: service.setTokenTtl,
    get tokenTtlSeconds() {
      return service.tokenTtlSeconds;
    },
    pushLogistics,
    subscribe: events.subscribe,
    pushes: pusher.pushes,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return sandbox;
}
