import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { checkKeys } from '../shared/check.js';
import { ConfigError } from '../errors/ConfigError.js';
import type { Logistics } from '../schemas/logistics.js';
import { nodeCrypto } from '../server/crypto/node.js';
import { REFERENCE_WINDOW_SECONDS, verifyReferenceSignature } from '../server/tokens/signing.js';
import { externalUserIdProblem, TOKEN_PATH } from '../server/tokens/exchange-options.js';
import { getHeader } from '../server/http/headers.js';
import { CONTROL_PREFIX, handleControl } from './control.js';
import { hostName } from './control-guard.js';
import { createEventLog } from './event-log.js';
import { answerPreflight, corsHeaders, readBody, sendJson } from './http.js';
import { createJwtSigner } from './jwt.js';
import { createNonceStore } from './nonce-store.js';
import { createOrderStore, orderBodyProblems } from './orders.js';
import { createPusher } from './push.js';
import type { FailNextOptions, PushOptions, Sandbox, SandboxOptions, SandboxStats, TokenVerdict } from './types.js';

/**
 * The sandbox's own data routes. The interface names SDK data calls (orders, logistics) but
 * not their paths: these are the sandbox's, for demos and tests.
 */
export const SANDBOX_PATHS = {
  /** `GET` lists the orders; `POST` with `{ partner_order_no, sku?, qty? }` creates one. */
  orders: '/open/api/v1/sdk/orders',
  /** `GET …/orders/{order_no}`: one order. */
  order: '/open/api/v1/sdk/orders/{order_no}',
  /** `GET …/logistics?order_no=SO20240601001`: an order's logistics (the same object a push carries). */
  logistics: '/open/api/v1/sdk/logistics',
  /** Any method: answers `{ method, body }`, the body as received. */
  echo: '/open/api/v1/sdk/echo',
} as const;

/**
 * Error codes the sandbox answers with. The interface does not publish error bodies or
 * non-zero codes: these are the sandbox's own stand-ins, listed in the README.
 */
export const SANDBOX_CODES = {
  badRequest: 40001,
  invalidUserId: 40002,
  unauthorized: 40100,
  badSignature: 40101,
  staleTimestamp: 40102,
  replayedNonce: 40103,
  unknownKey: 40104,
  notFound: 40400,
  methodNotAllowed: 40500,
  tooLarge: 41300,
  /** A data call refused by `failNext` with 401. Other statuses answer `status * 100 + 90` (e.g. 50390). */
  failNext: 40190,
} as const;

const ISSUER = 'channel-sandbox';
const ORDER_PATH = /^\/open\/api\/v1\/sdk\/orders\/([^/]+)$/;
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
  if (!['loopback', 'any', 'off'].includes(controlApi)) throw new ConfigError("controlApi must be 'loopback', 'any' or 'off'");
  const credentials = options.credentials ?? { accessKey: 'ak_sandbox_' + randomBytes(4).toString('hex'), secretKey: 'sk_sandbox_' + randomBytes(16).toString('hex') };
  const events = createEventLog(options.now ?? systemClock);
  const jwt = createJwtSigner(ISSUER);
  // A nonce must be remembered as long as its timestamp can pass the window: up to 300 s ahead, then 300 s.
  const nonces = createNonceStore(2 * REFERENCE_WINDOW_SECONDS + 1);
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

  async function tokenEndpoint(req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
    stats.tokenCalls++;
    const reject = (status: number, code: number, reason: string) => {
      stats.tokenRejections++;
      events.emit({ type: 'token', ok: false, status, code, reason });
      sendJson(res, status, { code, message: reason }, status === 405 ? { allow: 'POST' } : {});
    };
    if (req.method !== 'POST') return reject(405, SANDBOX_CODES.methodNotAllowed, 'use POST');
    const header = (name: string) => getHeader(req.headers, name);
    const nowMs = now();
    const reason = await verifyReferenceSignature(nodeCrypto, {
      method: 'POST',
      path: req.url ?? '',
      body,
      nowMs,
      headers: { key: header('x-channel-key'), timestamp: header('x-channel-timestamp'), nonce: header('x-channel-nonce'), signature: header('x-channel-signature') },
      secretKeyFor: (key) => (key === credentials.accessKey ? credentials.secretKey : undefined),
    });
    if (reason) {
      const code = /window/.test(reason) ? SANDBOX_CODES.staleTimestamp : /access key/.test(reason) ? SANDBOX_CODES.unknownKey : SANDBOX_CODES.badSignature;
      return reject(401, code, reason);
    }
    if (!nonces.add(header('x-channel-nonce') as string, Math.floor(nowMs / 1000))) return reject(401, SANDBOX_CODES.replayedNonce, 'nonce already used within the ±300 s window');
    if (!/^application\/json\b/i.test(header('content-type') ?? '')) return reject(400, SANDBOX_CODES.badRequest, 'Content-Type must be application/json');
    let userId: unknown;
    try {
      userId = (JSON.parse(body.toString('utf8')) as { external_user_id?: unknown } | null)?.external_user_id;
    } catch {
      return reject(400, SANDBOX_CODES.badRequest, 'body is not JSON');
    }
    const problem = externalUserIdProblem(userId);
    if (problem) return reject(400, SANDBOX_CODES.invalidUserId, 'external_user_id ' + problem);
    sendJson(res, 200, { code: 0, data: { access_token: issue(userId as string, 'endpoint'), expires_in: tokenTtlSeconds, token_type: 'Bearer' } });
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

  function dataRoute(req: IncomingMessage, body: Buffer, res: ServerResponse, path: string, query: string): void {
    stats.dataCalls++;
    const method = req.method ?? 'GET';
    const search = query ? { query } : {};
    if (failing.count > 0) {
      failing.count--;
      const status = failing.status;
      if (status === 401) stats.unauthorized++;
      events.emit({ type: 'data', method, path, ...search, status, reason: 'failNext' });
      const retryAfter: Record<string, string> = failing.retryAfterSeconds === undefined ? {} : { 'retry-after': String(failing.retryAfterSeconds) };
      return sendJson(res, status, { code: status === 401 ? SANDBOX_CODES.failNext : status * 100 + 90, message: 'failNext' }, { ...corsHeaders, ...retryAfter });
    }
    const { reason, jti } = checkBearer(req);
    if (reason) {
      stats.unauthorized++;
      events.emit({ type: 'data', method, path, ...search, status: 401, reason, ...(jti ? { jti } : {}) });
      return sendJson(res, 401, { code: SANDBOX_CODES.unauthorized, message: reason }, corsHeaders);
    }
    const answer = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      events.emit({ type: 'data', method, path, ...search, status, jti });
      sendJson(res, status, value, { ...corsHeaders, ...headers });
    };
    const wrongMethod = (allow: string) => answer(405, { code: SANDBOX_CODES.methodNotAllowed, message: `${method} is not served here; use ${allow}` }, { allow });
    const isGet = method === 'GET' || method === 'HEAD';
    if (path === SANDBOX_PATHS.orders) {
      if (isGet) return answer(200, { code: 0, data: { orders: orders.list() } });
      if (method !== 'POST') return wrongMethod('GET, POST');
      let input: unknown;
      try {
        input = JSON.parse(body.toString('utf8'));
      } catch {
        return answer(400, { code: SANDBOX_CODES.badRequest, message: 'the body must be JSON like {"partner_order_no":"P-20001"} (send it with json: {...})' });
      }
      const problems = orderBodyProblems(input);
      if (problems) return answer(400, { code: SANDBOX_CODES.badRequest, message: problems });
      return answer(200, { code: 0, data: orders.create(input as { partner_order_no: string; sku?: string; qty?: number }) });
    }
    const one = ORDER_PATH.exec(path);
    if (one) {
      if (!isGet) return wrongMethod('GET');
      const order = orders.get(decodeURIComponent(one[1]));
      return order ? answer(200, { code: 0, data: order }) : answer(404, { code: SANDBOX_CODES.notFound, message: 'no order ' + one[1] });
    }
    if (path === SANDBOX_PATHS.logistics) {
      if (!isGet) return wrongMethod('GET');
      const orderNo = new URLSearchParams(query).get('order_no');
      if (!orderNo) return answer(400, { code: SANDBOX_CODES.badRequest, message: 'order_no is required, e.g. ?order_no=SO20240601001' });
      const found = orders.logistics(orderNo);
      return found ? answer(200, { code: 0, data: found }) : answer(404, { code: SANDBOX_CODES.notFound, message: 'no order ' + orderNo });
    }
    if (path === SANDBOX_PATHS.echo) return answer(200, { code: 0, data: { method, body: body.toString('utf8') } });
    return answer(404, { code: SANDBOX_CODES.notFound, message: 'the sandbox serves ' + Object.values(SANDBOX_PATHS).join(', ') });
  }

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
        state: () => ({ tokenTtlSeconds, failNext: { count: failing.count, status: failing.status }, webhookUrl: options.webhookUrl ?? null, listeners: pusher.listening() }),
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
    if (!logistics) throw new ConfigError('no order ' + target + '; the sandbox has ' + orders.list().map((order) => order.order_no).slice(0, 5).join(', '));
    try {
      return await pusher.push(logistics, o);
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
  }

  const sandbox: Sandbox = {
    url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
    credentials,
    issueToken: async (externalUserId) => issue(externalUserId, 'direct'),
    verifyToken(token) {
      if (typeof token !== 'string') throw new ConfigError('verifyToken needs the JWT string');
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

const OPTION_KEYS = ['port', 'host', 'tokenTtlSeconds', 'webhookUrl', 'webhookSecret', 'webhookTimeoutMs', 'credentials', 'now', 'controlApi', 'controlHosts', 'onEvent'];

function checkControlHosts(hosts: unknown): string[] {
  if (hosts === undefined) return [];
  const valid = Array.isArray(hosts) && hosts.every((h) => typeof h === 'string' && /^[a-z0-9.-]+$/i.test(h) && hostName(h) === h.toLowerCase());
  if (!valid) throw new ConfigError("controlHosts must be an array of host names without port or scheme, e.g. ['sandbox.ci.internal']");
  return (hosts as string[]).map((h) => h.toLowerCase());
}

function checkTtl(seconds: number): number {
  if (typeof seconds !== 'number' || !(seconds > 0) || !Number.isFinite(seconds)) throw new ConfigError('tokenTtlSeconds must be a positive number of seconds');
  return seconds;
}
