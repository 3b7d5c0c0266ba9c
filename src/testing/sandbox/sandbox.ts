import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { checkKeys, fail } from '../../shared/check.js';
import type { Logistics } from '../../schemas/logistics.js';
import { TOKEN_PATH } from '../../server/tokens/exchange-options.js';
import { CONTROL_PREFIX, handleControl } from './control.js';
import { createDataRoute } from './data-routes.js';
import { createEventLog } from './event-log.js';
import { answerPreflight, corsHeaders, readBody, sendJson } from '../http-io.js';
import { createJwtSigner } from './sandbox-jwt.js';
import { createOrderStore } from './orders.js';
import { createPusher } from './push.js';
import { SANDBOX_CODES } from './sandbox-api.js';
import { checkControlHosts, checkTtl, OPTION_KEYS } from './sandbox-options.js';
import { createTokenEndpoint } from './token-endpoint.js';
import type { FailNextOptions, PushOptions, Sandbox, SandboxOptions, SandboxStats, TokenVerdict } from './types.js';

export { SANDBOX_CODES, SANDBOX_PATHS } from './sandbox-api.js';

const ISSUER = 'channel-sandbox';
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
  let tokenTtlSeconds = checkTtl(options.tokenTtlSeconds ?? 900);
  if (!['loopback', 'any', 'off'].includes(controlApi)) fail("controlApi must be 'loopback', 'any' or 'off'");
  const credentials = options.credentials ?? {
    accessKey: 'ak_sandbox_' + randomBytes(4).toString('hex'),
    secretKey: 'sk_sandbox_' + randomBytes(16).toString('hex'),
  };
  const events = createEventLog(options.now ?? systemClock);
  const jwt = createJwtSigner(ISSUER);
  const orders = createOrderStore(now);
  const pusher = createPusher({ secret: webhookSecret, timeoutMs: webhookTimeoutMs, defaultUrl: options.webhookUrl, events });
  const stats: SandboxStats = { tokenCalls: 0, tokensIssued: 0, tokenRejections: 0, dataCalls: 0, unauthorized: 0, pushes: 0, pushFailures: 0 };
  events.subscribe((event) => {
    if (event.type !== 'push') return;
    stats.pushes++;
    if (!event.record.ok) stats.pushFailures++;
  });
  if (options.onEvent) events.subscribe(options.onEvent); // after the counters, so it sees them updated
  let issued = 0;
  let expiredUpTo = 0; // tokens with jti <= this are expired
  const failing = { count: 0, status: 401, retryAfterSeconds: undefined as number | undefined };

  function issue(externalUserId: string, via: 'endpoint' | 'direct'): string {
    const iat = Math.floor(now() / 1000);
    const jti = String(++issued);
    stats.tokensIssued++;
    events.emit({ type: 'token', ok: true, externalUserId, jti, via });
    return jwt.sign({ sub: externalUserId, iss: ISSUER, iat, exp: iat + tokenTtlSeconds, jti });
  }

  /** A token checked as the data routes check it. */
  function verifyToken(token: string): TokenVerdict {
    const check = jwt.verify(token, Math.floor(now() / 1000));
    if (!check.claims) return { valid: false, reason: check.reason };
    const { sub, iat, exp, jti } = check.claims;
    if (Number(jti) <= expiredUpTo) return { valid: false, reason: 'token expired (expireTokens)', claims: { sub, iat, exp, jti } };
    return { valid: true, claims: { sub, iat, exp, jti } };
  }

  /** The token's jti when its Bearer token is good, else why not (the hot path: no copy of the claims). */
  function checkBearer(req: IncomingMessage): { reason?: string; jti?: string } {
    const auth = req.headers.authorization;
    if (!auth) return { reason: 'missing Authorization header' };
    const check = auth.startsWith('Bearer ') ? jwt.verify(auth.slice(7), Math.floor(now() / 1000)) : { reason: 'not a JWT' };
    if (!check.claims) return { reason: check.reason === 'not a JWT' ? 'not a Bearer JWT (a console login token is not accepted)' : check.reason };
    const jti = check.claims.jti;
    if (Number(jti) <= expiredUpTo) return { reason: 'token expired (expireTokens)', jti };
    return { jti };
  }

  const tokenEndpoint = createTokenEndpoint({ stats, events, credentials, now, issue, ttl: () => tokenTtlSeconds });
  const dataRoute = createDataRoute({ stats, events, orders, failing, checkBearer });

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
          tokenTtlSeconds,
          failNext: { count: failing.count, status: failing.status },
          webhookUrl: options.webhookUrl ?? null,
          listeners: pusher.listening(),
        }),
      });
    }
    const isToken = path === TOKEN_PATH;
    // The token endpoint gets no CORS headers: a page that could call it would hold the AK/SK.
    if (req.method === 'OPTIONS' && !isToken) return answerPreflight(req, res);
    const route = (body: Buffer | undefined) => {
      if (!body) return sendJson(res, 413, { code: SANDBOX_CODES.tooLarge, message: 'body larger than 1 MiB' }, isToken ? {} : corsHeaders);
      if (isToken) return tokenEndpoint(req, body, res);
      dataRoute(req, body, res, path, query);
    };
    const failed = (error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { code: 50000, message: 'sandbox error: ' + (error as Error).message });
    };
    const body = readBody(req);
    // A bodiless request (a GET) is answered in this turn, without a promise.
    if (Buffer.isBuffer(body)) {
      try {
        route(body)?.catch(failed);
      } catch (error) {
        failed(error);
      }
      return;
    }
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
    const logistics = typeof target === 'string' ? orders.logistics(target) : target;
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
      return await pusher.push(logistics, o);
    } catch (error) {
      fail((error as Error).message);
    }
  }

  const sandbox: Sandbox = {
    url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
    credentials,
    issueToken: async (externalUserId) => issue(externalUserId, 'direct'),
    verifyToken(token) {
      if (typeof token !== 'string') fail('verifyToken needs the JWT string');
      return verifyToken(token);
    },
    expireTokens() {
      expiredUpTo = issued;
      events.emit({ type: 'control', action: 'expire', expired: issued });
      return issued;
    },
    failNext(count, o: FailNextOptions = {}) {
      failing.count = Math.max(0, Math.floor(count));
      failing.status = o.status ?? 401;
      failing.retryAfterSeconds = o.retryAfterSeconds;
      events.emit({ type: 'control', action: 'fail-next', count: failing.count, status: failing.status });
    },
    setTokenTtl(seconds) {
      tokenTtlSeconds = checkTtl(seconds);
      events.emit({ type: 'control', action: 'ttl', seconds });
    },
    get tokenTtlSeconds() {
      return tokenTtlSeconds;
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
