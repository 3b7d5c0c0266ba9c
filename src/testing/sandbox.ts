import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { ConfigError } from '../errors/ConfigError.js';
import type { Logistics } from '../schemas/logistics.js';
import { nodeCrypto } from '../server/crypto-node.js';
import { createReferenceSigning, REFERENCE_WINDOW_SECONDS } from '../server/signing.js';
import { externalUserIdProblem, TOKEN_PATH } from '../server/token-exchange.js';
import { getHeader } from '../server/headers.js';
import { SIGNATURE_HEADER } from '../server/webhook.js';
import { demoLogistics } from './demo-data.js';

/** The sandbox's own data routes (the interface names SDK data calls but not their paths). */
export const SANDBOX_PATHS = {
  orders: '/open/api/v1/sdk/orders',
  logistics: '/open/api/v1/sdk/logistics',
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
  failNext: 40190,
} as const;

/** Options of {@link startSandbox}. */
export interface SandboxOptions {
  /** @default 0 (a free port) */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Lifetime of issued JWTs, in seconds; shorten it for QA. @default 900 */
  tokenTtlSeconds?: number;
  /** Where `pushLogistics` POSTs to. */
  webhookUrl?: string;
  /** Signs pushes; empty means pushes go unsigned, as the service does. @default '' */
  webhookSecret?: string;
  /** How long a push waits for the receiver. @default 8000 (the service's window) */
  webhookTimeoutMs?: number;
  /** Partner credentials the token endpoint accepts. @default random ones, see `credentials` */
  credentials?: { accessKey: string; secretKey: string };
  /** The sandbox's clock in epoch ms (token expiry, timestamp window). @default Date.now */
  now?: () => number;
  /** Called for everything the sandbox does, for timelines and logs. Never carries a token or secret. */
  onEvent?: (event: SandboxEvent) => void;
}

/** What the sandbox reports through `onEvent`. */
export type SandboxEvent =
  | { type: 'token'; ok: true; externalUserId: string; jti: string }
  | { type: 'token'; ok: false; status: number; code: number; reason: string }
  | { type: 'data'; method: string; path: string; status: number; reason?: string; jti?: string }
  | { type: 'push'; record: PushRecord };

/** One push and its outcome. */
export interface PushRecord {
  id: number;
  url: string;
  orderNo: string;
  signed: boolean;
  tampered: boolean;
  /** 2xx from the receiver within the window. */
  ok: boolean;
  status?: number;
  durationMs: number;
  /** Why it failed: `HTTP 500`, `timeout after 8000 ms`, `connection refused`... */
  error?: string;
}

/** What `pushLogistics` resolves to. */
export type PushResult = Pick<PushRecord, 'ok' | 'status' | 'durationMs' | 'error'> & { id: number };

/** Counters since start. */
export interface SandboxStats {
  tokenCalls: number;
  tokensIssued: number;
  tokenRejections: number;
  dataCalls: number;
  unauthorized: number;
  pushes: number;
  pushFailures: number;
}

/** A running sandbox. */
export interface Sandbox {
  /** Base URL, e.g. `http://127.0.0.1:43125`: the `baseUrl` for both the client and `createTokenExchange`. */
  url: string;
  /** The AK/SK the token endpoint accepts. */
  credentials: { accessKey: string; secretKey: string };
  /** Issues a JWT directly, as the token endpoint would (for tests that skip the exchange). */
  issueToken(externalUserId: string): Promise<string>;
  /** Every JWT issued so far now gets 401. */
  expireTokens(): void;
  /** The next `count` data calls answer 401 whatever the token. */
  failNext(count: number): void;
  /** POSTs a signed `logistics.updated` push to `webhookUrl` (or `options.url`) and records the outcome. */
  pushLogistics(logistics: Logistics, options?: { url?: string; tamper?: boolean }): Promise<PushResult>;
  /** Every push so far, oldest first. */
  readonly pushes: readonly PushRecord[];
  readonly stats: Readonly<SandboxStats>;
  close(): Promise<void>;
}

const { verifyReferenceSignature } = createReferenceSigning(nodeCrypto);

/**
 * Starts a local emulation of the service on node:http: the token endpoint (reference
 * signature, ±300 s window, nonce replay refused, body rules), real HS256 JWTs (jose),
 * Bearer-protected data routes, and signed logistics pushes with the 8-second window.
 * @example
 * const sandbox = await startSandbox({ tokenTtlSeconds: 60, webhookUrl, webhookSecret: 'whsec' });
 * const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const {
    port = 0,
    host = '127.0.0.1',
    tokenTtlSeconds = 900,
    webhookSecret = '',
    webhookTimeoutMs = 8000,
    now = Date.now,
    onEvent = () => {},
  } = options;
  if (!(tokenTtlSeconds > 0)) throw new ConfigError('tokenTtlSeconds must be a positive number of seconds');
  const credentials = options.credentials ?? { accessKey: 'ak_sandbox_' + randomBytes(4).toString('hex'), secretKey: 'sk_sandbox_' + randomBytes(16).toString('hex') };
  const jwtKey = randomBytes(32);
  const issuer = 'channel-sandbox';
  const seenNonces = new Map<string, number>(); // nonce -> epoch s after which it may be forgotten
  const stats: SandboxStats = { tokenCalls: 0, tokensIssued: 0, tokenRejections: 0, dataCalls: 0, unauthorized: 0, pushes: 0, pushFailures: 0 };
  const pushes: PushRecord[] = [];
  let issued = 0;
  let expiredUpTo = 0; // tokens with jti <= this are expired
  let failNext = 0;
  const created: Array<{ order_no: string; partner_order_no: string | undefined }> = [];

  async function issueToken(externalUserId: string): Promise<string> {
    const iat = Math.floor(now() / 1000);
    const jti = String(++issued);
    stats.tokensIssued++;
    onEvent({ type: 'token', ok: true, externalUserId, jti });
    return new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(externalUserId)
      .setIssuer(issuer)
      .setIssuedAt(iat)
      .setExpirationTime(iat + tokenTtlSeconds)
      .setJti(jti)
      .sign(jwtKey);
  }

  function send(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  async function tokenEndpoint(req: IncomingMessage, body: string, res: ServerResponse): Promise<void> {
    stats.tokenCalls++;
    const reject = (status: number, code: number, reason: string) => {
      stats.tokenRejections++;
      onEvent({ type: 'token', ok: false, status, code, reason });
      send(res, status, { code, message: reason });
    };
    if (req.method !== 'POST') return reject(405, SANDBOX_CODES.methodNotAllowed, 'use POST');
    const header = (name: string) => getHeader(req.headers, name);
    const reason = await verifyReferenceSignature({
      method: 'POST',
      path: req.url ?? '',
      body,
      nowMs: now(),
      headers: { key: header('x-channel-key'), timestamp: header('x-channel-timestamp'), nonce: header('x-channel-nonce'), signature: header('x-channel-signature') },
      secretKeyFor: (key) => (key === credentials.accessKey ? credentials.secretKey : undefined),
    });
    if (reason) {
      const code = /window/.test(reason) ? SANDBOX_CODES.staleTimestamp : /access key/.test(reason) ? SANDBOX_CODES.unknownKey : SANDBOX_CODES.badSignature;
      return reject(401, code, reason);
    }
    const nowS = now() / 1000;
    for (const [nonce, until] of seenNonces) if (until < nowS) seenNonces.delete(nonce);
    const nonce = header('x-channel-nonce') as string;
    if (seenNonces.has(nonce)) return reject(401, SANDBOX_CODES.replayedNonce, 'nonce already used within the ±300 s window');
    seenNonces.set(nonce, nowS + 2 * REFERENCE_WINDOW_SECONDS);
    if (!/^application\/json\b/i.test(header('content-type') ?? '')) return reject(400, SANDBOX_CODES.badRequest, 'Content-Type must be application/json');
    let userId: unknown;
    try {
      userId = (JSON.parse(body) as { external_user_id?: unknown }).external_user_id;
    } catch {
      return reject(400, SANDBOX_CODES.badRequest, 'body is not JSON');
    }
    const problem = externalUserIdProblem(userId);
    if (problem) return reject(400, SANDBOX_CODES.invalidUserId, 'external_user_id ' + problem);
    send(res, 200, { code: 0, data: { access_token: await issueToken(userId as string), expires_in: tokenTtlSeconds, token_type: 'Bearer' } });
  }

  /** undefined when the Bearer token is good, else why not. */
  async function checkBearer(req: IncomingMessage): Promise<{ reason?: string; jti?: string }> {
    const auth = req.headers.authorization;
    if (!auth) return { reason: 'missing Authorization header' };
    const match = /^Bearer ([\w-]+\.[\w-]+\.[\w-]*)$/.exec(auth);
    if (!match) return { reason: 'not a Bearer JWT (a console login token is not accepted)' };
    try {
      const { payload } = await jwtVerify(match[1], jwtKey, { algorithms: ['HS256'], issuer, currentDate: new Date(now()) });
      if (Number(payload.jti) <= expiredUpTo) return { reason: 'token expired (expireTokens)', jti: payload.jti };
      return { jti: payload.jti };
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) return { reason: 'token expired' };
      if (error instanceof joseErrors.JWSSignatureVerificationFailed) return { reason: 'signature invalid (tampered or foreign token)' };
      if (error instanceof joseErrors.JOSEAlgNotAllowed) return { reason: 'algorithm not allowed' };
      return { reason: 'invalid token: ' + (error as Error).message };
    }
  }

  async function dataRoute(req: IncomingMessage, body: string, res: ServerResponse): Promise<void> {
    stats.dataCalls++;
    const [path, query = ''] = (req.url ?? '/').split('?');
    const method = req.method ?? 'GET';
    const { reason, jti } = failNext > 0 ? (failNext--, { reason: 'failNext', jti: undefined }) : await checkBearer(req);
    if (reason) {
      stats.unauthorized++;
      onEvent({ type: 'data', method, path, status: 401, reason });
      return send(res, 401, { code: reason === 'failNext' ? SANDBOX_CODES.failNext : SANDBOX_CODES.unauthorized, message: reason });
    }
    const answer = (status: number, value: unknown) => {
      onEvent({ type: 'data', method, path, status, jti });
      send(res, status, value);
    };
    if (path === SANDBOX_PATHS.orders && method === 'GET') {
      return answer(200, { code: 0, data: { orders: demoLogistics.map((l) => ({ order_no: l.order_no, partner_order_no: l.partner_order_no })).concat(created) } });
    }
    if (path === SANDBOX_PATHS.orders && method === 'POST') {
      let input: { partner_order_no?: unknown } | undefined;
      try {
        input = JSON.parse(body) as typeof input;
      } catch {
        input = undefined;
      }
      if (!input || typeof input !== 'object' || (input.partner_order_no !== undefined && typeof input.partner_order_no !== 'string')) {
        return answer(400, { code: SANDBOX_CODES.badRequest, message: 'send a JSON object, e.g. { "partner_order_no": "P-20001" }' });
      }
      const order = { order_no: 'SO' + String(20240700001 + created.length), partner_order_no: input.partner_order_no as string | undefined };
      created.push(order);
      return answer(200, { code: 0, data: order });
    }
    if (path.startsWith(SANDBOX_PATHS.orders + '/') && method === 'GET') {
      const orderNo = decodeURIComponent(path.slice(SANDBOX_PATHS.orders.length + 1));
      const found = demoLogistics.find((l) => l.order_no === orderNo);
      return found ? answer(200, { code: 0, data: { order_no: found.order_no, partner_order_no: found.partner_order_no } }) : answer(404, { code: SANDBOX_CODES.notFound, message: 'no such order_no' });
    }
    if (path === SANDBOX_PATHS.logistics && method === 'GET') {
      const orderNo = new URLSearchParams(query).get('order_no');
      const found = demoLogistics.find((l) => l.order_no === orderNo);
      return found ? answer(200, { code: 0, data: found }) : answer(404, { code: SANDBOX_CODES.notFound, message: 'no such order_no' });
    }
    if (path === SANDBOX_PATHS.echo) return answer(200, { code: 0, data: { method, body } });
    return answer(404, { code: SANDBOX_CODES.notFound, message: 'the sandbox serves ' + Object.values(SANDBOX_PATHS).join(', ') });
  }

  const server = createServer((req, res) => {
    // Browsers call the data routes directly (the demo page does): answer CORS.
    res.setHeader('access-control-allow-origin', '*');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE', 'access-control-allow-headers': 'authorization, content-type', 'access-control-max-age': '600' });
      return void res.end();
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const route = (req.url ?? '').split('?')[0] === TOKEN_PATH ? tokenEndpoint : dataRoute;
      route(req, body, res).catch((error: unknown) => send(res, 500, { code: 50000, message: 'sandbox error: ' + (error as Error).message }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;

  async function pushLogistics(logistics: Logistics, o: { url?: string; tamper?: boolean } = {}): Promise<PushResult> {
    const url = o.url ?? options.webhookUrl;
    if (!url) throw new ConfigError('pushLogistics needs a webhookUrl (sandbox option or { url })');
    const body = JSON.stringify({ event: 'logistics.updated', logistics });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (webhookSecret) headers[SIGNATURE_HEADER] = await nodeCrypto.hmacHex(webhookSecret, body);
    // Tampering changes the body after signing, as a man in the middle would.
    const sent = o.tamper ? body.replace(/"order_no":"/, '"order_no":"X') : body;
    const started = Date.now();
    const record: PushRecord = { id: pushes.length + 1, url, orderNo: logistics.order_no, signed: !!webhookSecret, tampered: !!o.tamper, ok: false, durationMs: 0 };
    try {
      const response = await fetch(url, { method: 'POST', headers, body: sent, signal: AbortSignal.timeout(webhookTimeoutMs) });
      await response.arrayBuffer().catch(() => undefined); // the body is not used
      record.status = response.status;
      record.ok = response.status >= 200 && response.status < 300;
      if (!record.ok) record.error = 'HTTP ' + response.status;
    } catch (error) {
      const name = (error as Error).name;
      record.error = name === 'TimeoutError' ? 'timeout after ' + webhookTimeoutMs + ' ms' : 'connection failed: ' + ((error as Error & { cause?: Error }).cause?.message ?? (error as Error).message);
    }
    record.durationMs = Date.now() - started;
    pushes.push(record);
    stats.pushes++;
    if (!record.ok) stats.pushFailures++;
    onEvent({ type: 'push', record });
    return { id: record.id, ok: record.ok, status: record.status, durationMs: record.durationMs, error: record.error };
  }

  return {
    url: `http://${address.address}:${address.port}`,
    credentials,
    issueToken,
    expireTokens: () => void (expiredUpTo = issued),
    failNext: (count) => void (failNext = Math.max(0, Math.floor(count))),
    pushLogistics,
    pushes,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
