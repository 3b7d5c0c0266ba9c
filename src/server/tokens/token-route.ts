import { checkKeys, describeValue } from '../../shared/check.js';
import { isChannelError } from '../../errors/ChannelError.js';
import { ConfigError } from '../../errors/ConfigError.js';
import { messageIn } from '../../shared/message.js';
import { safeReport } from '../../shared/report.js';
import { answer, fetchRoute, unprefixed, type Core, type FetchRoute, type Incoming, type Outgoing } from '../http/route.js';

/** What the token route needs from `createTokenExchange(...)` (or your own source of user tokens). */
export interface TokenSource {
  getToken(
    externalUserId: string,
    options: { forceRefresh: boolean; rejected?: string },
  ): Promise<{ accessToken: string; expiresIn: number; expiresAt?: number }>;
}

/** Where the token route stopped, for `onError`. */
export interface TokenRouteErrorInfo {
  /**
   * `request` malformed, `method` not GET/POST, `origin` a cross-site request (403), `body` bad
   * JSON or not JSON (415), `user` resolveUser threw or returned something that is not an id,
   * `exchange` getToken failed.
   */
  stage: 'request' | 'method' | 'origin' | 'user' | 'body' | 'exchange';
  /** The status answered. */
  status: number;
}

/** Options of {@link createTokenRoute}. */
export interface TokenRouteOptions<R = Request> {
  /**
   * Where tokens come from: `createTokenExchange({ baseUrl, accessKey, secretKey })`, or a
   * function returning it, called once at the first request (so that importing the route
   * without credentials, as `next build` does, works).
   */
  exchange: TokenSource | (() => TokenSource);
  /**
   * Your signed-in user's id, from the request, or null/undefined when nobody is signed in (401).
   * It receives what your framework hands the route: the Fetch `Request` (Next.js App Router,
   * Deno, Bun, workers), Hono's context, Express's `req`, Koa's `ctx`, Fastify's `request`.
   * Type it by annotating the parameter, e.g. `resolveUser: (req: express.Request) => req.user?.id`.
   */
  resolveUser: (request: R) => string | number | null | undefined | Promise<string | number | null | undefined>;
  /**
   * Failures, without the token. @default one console.error line for `user` and `exchange`
   * (and for the first cross-site refusal), nothing for the rest
   */
  onError?: (error: unknown, info: TokenRouteErrorInfo) => void;
  /**
   * Pages on other sites that may call the route from a browser, as origins
   * (`'https://shop.example.com'`), or a function of the request's `Origin`. Browsers' cross-site
   * requests are refused (403) otherwise: same-origin and same-site pages, mini-program hosts
   * (no `Origin`), apps and servers need nothing here.
   * @default [] (none)
   */
  allowedOrigins?: readonly string[] | ((origin: string) => boolean);
}

/** What {@link createTokenRoute} returns: a Fetch route that `toNodeHandler` also serves. */
export type TokenRoute = FetchRoute;

const MAX_BODY = 16 * 1024;
const NO_STORE = { 'cache-control': 'no-store' };
const SIGNED_OUT = answer(401, { error: 'not signed in' }, NO_STORE);
const NOT_ALLOWED = answer(405, { error: 'method not allowed' }, { allow: 'GET, POST' });
const BAD_REQUEST = answer(400, { error: 'bad request' });
const BAD_BODY = answer(400, { error: 'the body must be JSON, e.g. {"forceRefresh":true}, or empty' });
const EXCHANGE_FAILED = answer(502, { error: 'could not get a token from the Channel service' }, NO_STORE);
const EXCHANGE_CONFIG = answer(500, { error: 'could not ask for a token for this user; see the server log' }, NO_STORE);
const USER_FAILED = answer(500, { error: 'could not tell who is signed in' }, NO_STORE);
const CROSS_SITE = answer(403, { error: "cross-site request refused: list the page's origin in the token route's allowedOrigins" }, NO_STORE);
const NOT_JSON = answer(415, { error: 'a POST to the token route must be JSON (Content-Type: application/json), e.g. {"forceRefresh":true}, or have no body' });

const FORCE = /(?:^|&)force=(?:1|true)(?:&|$)/;
// The fingerprint of the token a 401 just rejected (tokenProvider's `rejected`).
const REJECTED = /(?:^|&)rejected=(\w{1,16})(?:&|$)/;
const JSON_TYPE = /^\s*application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;
const ORIGIN = /^https?:\/\/[^/?#\s@]+$/i;
const optionKeys = ['exchange', 'resolveUser', 'onError', 'allowedOrigins'];

/** `host[:port]` of an origin or Host header, lower-case, without the scheme's default port. */
function hostPart(value: string): string {
  const host = value.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').toLowerCase();
  return /^https:/i.test(value) ? host.replace(/:443$/, '') : host.replace(/:80$/, '');
}

function checkAllowedOrigins(value: unknown): (origin: string) => boolean {
  if (value === undefined) return () => false;
  if (typeof value === 'function') return (origin) => (value as (origin: string) => unknown)(origin) === true;
  if (!Array.isArray(value))
    throw new ConfigError(
      'allowedOrigins must be an array of origins such as ["https://shop.example.com"], or a function (origin) => boolean; got ' + describeValue(value),
    );
  const allowed = new Set<string>();
  value.forEach((item: unknown, i) => {
    const origin = typeof item === 'string' ? item.replace(/\/+$/, '') : item;
    if (typeof origin !== 'string' || !ORIGIN.test(origin)) {
      throw new ConfigError(
        'allowedOrigins[' + i + '] must be an origin: scheme, host and port only, such as "https://shop.example.com"; got ' + describeValue(item),
      );
    }
    allowed.add(origin.toLowerCase());
  });
  return (origin) => allowed.has(origin.toLowerCase());
}

/** Why a request is a browser's cross-site request the route refuses, or undefined. */
function crossSite(incoming: Incoming, allowed: (origin: string) => boolean): string | undefined {
  const origin = incoming.header('origin');
  if (origin !== undefined && origin !== 'null' && allowed(origin)) return undefined;
  const site = incoming.header('sec-fetch-site');
  // Every current browser says where a request comes from; `none` is the user's own navigation.
  if (site !== undefined)
    return site.trim().toLowerCase() === 'cross-site'
      ? 'a cross-site request (Sec-Fetch-Site: cross-site' + (origin ? ', Origin ' + origin : '') + ')'
      : undefined;
  // No Origin: not a browser's cross-origin request. Mini-program hosts (a servicewechat.com
  // Referer, no Origin), apps and servers come this way.
  if (origin === undefined) return undefined;
  if (origin === 'null') return 'a request from an opaque origin (Origin: null: a sandboxed frame or a local file)';
  // An older browser: same origin as the Host (or the proxy's X-Forwarded-Host) it was sent to.
  const host = hostPart(origin);
  const hosts = [incoming.header('host'), incoming.header('x-forwarded-host')?.split(',')[0].trim(), incoming.authority?.()];
  return hosts.some((h) => h !== undefined && h !== '' && hostPart(h) === host) ? undefined : 'a request from another origin (Origin ' + origin + ')';
}

/** What resolveUser returned, for the message: the kind of value, and an object's first keys (never its values). */
function describeUser(user: unknown): string {
  if (typeof user === 'object' && user !== null && !Array.isArray(user)) {
    const keys = Object.keys(user).slice(0, 6);
    const hint = keys.indexOf('id') >= 0 ? ' (return its .id)' : '';
    return 'an object' + (keys.length ? ' with keys ' + keys.join(', ') : '') + hint;
  }
  if (typeof user === 'bigint') return 'a bigint (return String(id))';
  return describeValue(user);
}

/**
 * The partner's side of the client's `tokenProvider`, ready-made: `GET` (or `POST`) answers
 * `{ access_token, token_type: 'Bearer', expires_in }` for the signed-in user, with
 * `Cache-Control: no-store`. A forced refresh is asked for with `?force=1` in the URL, or
 * `{"forceRefresh":true}` as a JSON POST body; `rejected` (`&rejected=...` or in the body: the
 * fingerprint tokenProvider's context names) is passed on, so that it is never answered with
 * the token the 401 just rejected. 401 when `resolveUser` finds nobody; 502 when the exchange fails
 * (500 for a user id it refuses, or a `resolveUser` answer that is not an id), with the details in
 * `onError`, never the token. Browsers' cross-site requests (403) and POSTs that are not JSON (415)
 * are refused: no other site can make a signed-in user's browser ask for tokens.
 * @example
 * export const GET = createTokenRoute({ exchange, resolveUser: async (request) => (await getSession(request))?.userId });
 */
export function createTokenRoute<R = Request>(options: TokenRouteOptions<R>): TokenRoute {
  const o = options || ({} as TokenRouteOptions<R>);
  if (typeof o !== 'object') throw new ConfigError('createTokenRoute needs an options object: { exchange, resolveUser }');
  checkKeys(o, optionKeys, 'createTokenRoute option');
  const given = o.exchange;
  if (typeof given !== 'function' && typeof given?.getToken !== 'function')
    throw new ConfigError('createTokenRoute needs exchange: createTokenExchange({ baseUrl, accessKey, secretKey })');
  if (typeof o.resolveUser !== 'function') throw new ConfigError('createTokenRoute needs resolveUser: (request) => the signed-in user id, or null');
  if (o.onError !== undefined && typeof o.onError !== 'function')
    throw new ConfigError('onError must be a function (error, info) => void; got ' + describeValue(o.onError));
  const { resolveUser } = o;
  const allowed = checkAllowedOrigins(o.allowedOrigins);
  let exchange: TokenSource | undefined = typeof given === 'function' ? undefined : given;
  let toldCrossSite = false;
  // A reporter that throws changes no answer.
  const report = safeReport(
    o.onError ||
      ((error: unknown, info: TokenRouteErrorInfo) => {
        // Cross-site refusals: the first one, for a partner whose page is elsewhere; not a flood.
        if (info.stage === 'origin' && !toldCrossSite) toldCrossSite = true;
        else if (info.stage !== 'user' && info.stage !== 'exchange') return;
        console.error('[channel-sdk] token route ' + info.stage + ' -> ' + info.status + ': ' + messageIn(unprefixed, error));
      }),
  );
  const fail = (out: Outgoing, error: unknown, stage: TokenRouteErrorInfo['stage']) => {
    report(error, { stage, status: out.status });
    return out;
  };

  const core: Core = async (incoming) => {
    if (incoming.malformedHost) return fail(BAD_REQUEST, new Error('malformed Host header'), 'request');
    const method = incoming.method;
    if (method !== 'GET' && method !== 'POST') return fail(NOT_ALLOWED, new Error('method ' + method + ' is not allowed; use GET or POST'), 'method');
    const foreign = crossSite(incoming, allowed);
    if (foreign) {
      return fail(
        CROSS_SITE,
        new Error('refused ' + foreign + ': a page on another site may not ask for tokens; if it is yours, list its origin in allowedOrigins'),
        'origin',
      );
    }
    const type = incoming.header('content-type');
    // A form or text/plain POST needs no CORS consent from a browser: never let one through.
    if (method === 'POST' && type !== undefined && !JSON_TYPE.test(type)) {
      return fail(
        NOT_JSON,
        new Error('refused a POST with Content-Type ' + type.slice(0, 60) + ': send JSON (Content-Type: application/json) or no body'),
        'body',
      );
    }
    let forceRefresh = FORCE.test(incoming.query());
    let rejected = (REJECTED.exec(incoming.query()) || [])[1];
    if (method === 'POST' && !forceRefresh) {
      // A body the framework parsed already (express.json()...) is used as it is.
      let value = incoming.parsed();
      if (value === undefined) {
        const body = await incoming.body(MAX_BODY);
        if (!body.ok) {
          if (body.reason !== 'consumed') return fail(BAD_BODY, new Error('unreadable or too large body'), 'body');
        } else if (body.bytes.length > 0) {
          if (type === undefined)
            return fail(NOT_JSON, new Error('refused a POST with a body but no Content-Type: send JSON (Content-Type: application/json)'), 'body');
          try {
            value = JSON.parse(new TextDecoder().decode(body.bytes));
          } catch (error) {
            return fail(BAD_BODY, error, 'body');
          }
        }
      }
      const asked = (typeof value === 'object' && value) || {};
      forceRefresh = (asked as { forceRefresh?: unknown }).forceRefresh === true;
      const named = (asked as { rejected?: unknown }).rejected;
      if (typeof named === 'string' && /^\w{1,16}$/.test(named)) rejected = named;
    }
    let user: string | number | null | undefined;
    try {
      user = await resolveUser(incoming.native as R);
    } catch (error) {
      return fail(USER_FAILED, error, 'user');
    }
    if (user === null || user === undefined || user === '') return SIGNED_OUT;
    // Anything else would become a shared id: every user's object is "[object Object]".
    if (!(typeof user === 'string' || (typeof user === 'number' && Number.isFinite(user)))) {
      const problem =
        'resolveUser returned ' +
        describeUser(user) +
        "; return the signed-in user's id as a non-empty string or a finite number (e.g. req.user.id), or null when nobody is signed in";
      return fail(USER_FAILED, new ConfigError(problem), 'user');
    }
    let token: Awaited<ReturnType<TokenSource['getToken']>>;
    try {
      exchange ||= (given as () => TokenSource)();
      token = await exchange.getToken(String(user), rejected ? { forceRefresh, rejected } : { forceRefresh });
    } catch (error) {
      // A ConfigError is ours to fix (e.g. a user id over 128 characters); the rest is upstream.
      const ours = isChannelError(error) && error.code === 'CONFIG_ERROR';
      return fail(ours ? EXCHANGE_CONFIG : EXCHANGE_FAILED, error, 'exchange');
    }
    const left = typeof token.expiresAt === 'number' ? Math.floor((token.expiresAt - Date.now()) / 1000) : token.expiresIn;
    return answer(200, { access_token: token.accessToken, token_type: 'Bearer', expires_in: Math.max(0, left) }, NO_STORE);
  };
  return fetchRoute(core);
}
