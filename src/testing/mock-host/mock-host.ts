import { checkKeys, fail } from '../../shared/check.js';
import { HOST_NAMES } from '../../transports/miniprogram/host-globals.js';
import { messageOf } from '../../shared/message.js';
import type { DataAnswer } from '../sandbox/file-routes.js';
import { SANDBOX_CODES } from '../sandbox/sandbox-api.js';
import { createServiceState } from '../sandbox/service-state.js';
import { defaultMaxConcurrent, type WireAnswer } from './host-answers.js';
import { createCalls, type Outgoing } from './mock-calls.js';
import { createHostLife } from './host-life.js';
import type { HostFailure } from './host-answers.js';
import { createFiles } from './mock-files.js';
import { routeTable, type RouteMatch } from './mock-routes.js';
import { createStorage } from './mock-storage.js';
import { createTokenRoute } from './mock-token-route.js';
import { passThroughOrigins, sendOver } from './pass-through.js';
import type { MockAnswer, MockCall, MockHost, MockHostOptions, MockHostStats, MockRequest } from './types.js';

const OPTION_KEYS = [
  'kind',
  'service',
  'routes',
  'sandboxData',
  'tokenRoute',
  'user',
  'tokenTtlSeconds',
  'now',
  'maxConcurrent',
  'allowedOrigins',
  'storage',
  'files',
  'passThrough',
];
/** Where the sandbox's own data routes live (SANDBOX_PATHS). */
const SANDBOX_PREFIX = '/open/api/v1/sdk/';

/**
 * An in-process mini-program host for the unit tests of your pages (jest, miniprogram-simulate):
 * `request`, `uploadFile` and `downloadFile` with the host's callbacks and failures, its storage
 * and file system, its limit of calls in flight, and a service behind them that issues tokens
 * and answers 401 when you expire them. Pass its functions to `createClient`, or install it as
 * the global `wx` (`my`, `tt`…). No network, no server: every answer comes from the routes given
 * here, a token route, and the sandbox's own data (orders, logistics, photos, invoices).
 * @example
 * const host = createMockHost();           // wx: the sandbox's data, a token route at /channel-token
 * const restore = host.install();          // globalThis.wx = host
 * // ...open the page, then: host.expireTokens(); ... expect(host.stats.forcedRefreshes).toBe(1);
 */
export function createMockHost(options: MockHostOptions = {}): MockHost {
  checkKeys(options ?? {}, OPTION_KEYS, 'createMockHost option');
  const kind = options.kind ?? 'wx';
  if (!(HOST_NAMES as readonly string[]).includes(kind)) fail(`createMockHost kind must be one of ${HOST_NAMES.join(', ')}; got ${JSON.stringify(kind)}`);
  const max = options.maxConcurrent ?? defaultMaxConcurrent(kind);
  if (!(max >= 1)) fail('createMockHost maxConcurrent must be a number of calls, 1 or more');
  const allowed = options.allowedOrigins;
  if (allowed !== undefined && !(Array.isArray(allowed) && allowed.every((o) => typeof o === 'string' && /^https?:\/\/[^/]+$/.test(o))))
    fail("createMockHost allowedOrigins must be a list of origins, e.g. ['https://channel.example.com']");
  for (const name of ['storage', 'files'] as const)
    if (options[name] !== undefined && !(options[name] instanceof Map)) fail(`createMockHost ${name} must be a Map`);
  const passThrough = passThroughOrigins(options.passThrough);
  /** The passThrough origins that refused a connection (said once each). */
  const refused = new Set<string>();
  const now = options.now ?? Date.now;
  const service = createServiceState({ now, clock: now, tokenTtlSeconds: options.tokenTtlSeconds ?? 900 });
  const routes = routeTable(options.routes, 'routes');
  const serviceRoutes = routeTable(options.service, 'service');
  const sandboxData = options.sandboxData ?? true;
  const storageMap = options.storage ?? new Map<string, unknown>();
  const filesMap = options.files ?? new Map<string, Uint8Array>();
  const calls: MockCall[] = [];
  const stats: MockHostStats = {
    requests: 0,
    uploads: 0,
    downloads: 0,
    tokenRouteCalls: 0,
    forcedRefreshes: 0,
    tokensIssued: 0,
    dataCalls: 0,
    unauthorized: 0,
    maxInFlight: 0,
  };
  let user = options.user === undefined ? 'user-1' : options.user;
  const tokenRoute = createTokenRoute(options.tokenRoute ?? '/channel-token', {
    user: () => user,
    issue: (sub) => service.issue(sub, 'direct'),
    ttl: () => service.tokenTtlSeconds,
    now,
    stats,
  });

  /** The answer to one call: your routes, real HTTP to a `passThrough` origin, the token route, the service's routes, the sandbox's data, else 404. */
  async function serve(outgoing: Outgoing): Promise<WireAnswer> {
    const { method, url } = outgoing;
    const mine = routes.match(method, url);
    if (mine) return handle(mine, outgoing);
    if (passThrough.has(url.origin)) {
      const answer = await sendOver(outgoing, refused);
      // Counted as the host's own token route counts its answers: a real one's too.
      if (tokenRoute.matches(url) && answer.status === 200) {
        stats.tokenRouteCalls++;
        if (/(?:^|&)force=(?:1|true)(?:&|$)/.test(url.search.slice(1))) stats.forcedRefreshes++;
      }
      return answer;
    }
    if (tokenRoute.matches(url)) return tokenRoute.answer(method, url, outgoing.body);
    const date: Array<[string, string]> = [['Date', new Date(now()).toUTCString()]];
    const data = { method, path: url.pathname, query: url.search.slice(1), authorization: outgoing.headers.authorization };
    const theirs = serviceRoutes.match(method, url);
    if (theirs) {
      const admission = service.data.admit(data);
      const answer = admission.refused ? fromData(admission.refused) : await handle(theirs, outgoing);
      if (!admission.refused) service.data.record(data, answer.status, admission.jti);
      return { ...answer, headers: [...answer.headers, ...date] };
    }
    if (sandboxData && url.pathname.startsWith(SANDBOX_PREFIX)) {
      const { file } = outgoing;
      const upload = file && { field: file.field, fileName: file.fileName, contentType: 'application/octet-stream', bytes: file.bytes, fields: file.formData };
      const answer = fromData(service.data.answer({ ...data, origin: url.origin, body: outgoing.body, upload }));
      return { ...answer, headers: [...answer.headers, ...date] };
    }
    const served = [
      ...routes.keys(),
      ...tokenRoute.describe(),
      ...serviceRoutes.keys(),
      ...(sandboxData ? [`the sandbox's data under ${SANDBOX_PREFIX}`] : []),
    ];
    return toWire({
      status: 404,
      body: { code: SANDBOX_CODES.notFound, message: `createMockHost: nothing answers ${method} ${url.href}; it answers ${served.join(', ') || 'nothing'}` },
    });
  }

  async function handle({ route, params }: RouteMatch, outgoing: Outgoing): Promise<WireAnswer> {
    const { url } = outgoing;
    const body = Buffer.from(outgoing.body).toString('utf8');
    let json: unknown;
    try {
      json = body ? JSON.parse(body) : undefined;
    } catch {
      // not JSON: `body` has it
    }
    const request: MockRequest = {
      api: outgoing.api,
      method: outgoing.method,
      url: url.href,
      origin: url.origin,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      params,
      headers: outgoing.headers,
      body,
      json,
      ...(outgoing.file ? { file: outgoing.file } : {}),
    };
    try {
      return toWire(await route(request));
    } catch (error) {
      const message = `createMockHost: the route for ${outgoing.method} ${url.pathname} threw: ${messageOf(error)}`;
      return toWire({ status: 500, body: { code: 50000, message } });
    }
  }

  const files = createFiles(kind, filesMap);
  const storage = createStorage(kind, storageMap);
  // The app's life and the network, and the calls in flight they cut.
  const life = createHostLife(kind);
  const inFlight = new Set<(failure: HostFailure, detail?: string) => void>();
  const cut = (failure: HostFailure, detail?: string) => inFlight.forEach((cutOne) => cutOne(failure, detail));
  const host: MockHost = {
    kind,
    ...createCalls({ kind, max, allowedOrigins: allowed, serve, files, calls, stats, inFlight, online: () => life.isConnected }),
    ...life.functions,
    hide: () => life.hide(),
    show: () => life.show(),
    setNetwork(state) {
      life.setNetwork(state);
      // What WeChat does to the calls running when the network changes.
      if (!state.isConnected) cut('network', 'errcode:10011 cronet_error_code:0 error_msg:network change, cancel all task');
    },
    interrupt: () => cut('interrupted'),
    get visible() {
      return life.visible;
    },
    get isConnected() {
      return life.isConnected;
    },
    ...storage,
    getFileSystemManager: () => files.fs,
    install() {
      const global = globalThis as Record<string, unknown>;
      const had = Object.prototype.hasOwnProperty.call(global, kind);
      const before = global[kind];
      global[kind] = host;
      return () => {
        if (had) global[kind] = before;
        else delete global[kind];
      };
    },
    expireTokens: service.expireTokens,
    failNext: service.failNext,
    setTokenTtl: service.setTokenTtl,
    issueToken: (sub) => service.issue(sub, 'direct'),
    verifyToken: service.verifyToken,
    get user() {
      return user;
    },
    set user(value) {
      if (value !== null && (typeof value !== 'string' || !value)) fail('host.user must be a user id (a non-empty string) or null');
      user = value;
    },
    calls,
    stats,
    storage: storageMap,
    files: filesMap,
    subscribe: service.subscribe,
  };
  // The service's counters, read through: the data routes count into the service's stats.
  Object.defineProperty(stats, 'tokensIssued', { enumerable: true, get: () => service.stats.tokensIssued });
  Object.defineProperty(stats, 'dataCalls', { enumerable: true, get: () => service.stats.dataCalls });
  Object.defineProperty(stats, 'unauthorized', { enumerable: true, get: () => service.stats.unauthorized });
  return host;
}

/** A data route's answer as it goes over the wire. */
const fromData = (answer: DataAnswer): WireAnswer => ({
  status: answer.status,
  headers: Object.entries(answer.headers),
  body: typeof answer.body === 'string' ? Buffer.from(answer.body) : answer.body,
});

/** A handler's answer as it goes over the wire: an object as JSON, a string as text, bytes as they are. */
export function toWire(answer: MockAnswer | undefined): WireAnswer {
  if (!answer || typeof answer !== 'object') fail('a createMockHost route must return { status?, headers?, body? }; got ' + String(answer));
  checkKeys(answer, ['status', 'headers', 'body'], 'route answer key', { data: 'body', json: 'body', statuscode: 'status', header: 'headers' });
  const status = answer.status ?? 200;
  if (!(Number.isInteger(status) && status >= 100 && status <= 599)) fail('a route answer status must be an HTTP status (100 to 599); got ' + String(status));
  const { body } = answer;
  const headers = Object.entries(answer.headers ?? {});
  const has = (name: string) => headers.some(([key]) => key.toLowerCase() === name);
  let bytes: Uint8Array;
  let type: string;
  if (body === undefined || body === null) [bytes, type] = [new Uint8Array(0), 'text/plain; charset=utf-8'];
  else if (typeof body === 'string') [bytes, type] = [Buffer.from(body), 'text/plain; charset=utf-8'];
  else if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) [bytes, type] = [new Uint8Array(body as ArrayBuffer), 'application/octet-stream'];
  else [bytes, type] = [Buffer.from(JSON.stringify(body)), 'application/json; charset=utf-8'];
  if (!has('content-type') && bytes.length) headers.push(['Content-Type', type]);
  return { status, headers, body: bytes };
}
