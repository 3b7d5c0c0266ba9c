import { checkKeys, describeValue, fail, milliseconds } from '../../shared/check.js';
import { isChannelError } from '../../errors/ChannelError.js';
import { ConfigError } from '../../errors/ConfigError.js';
import { messageIn } from '../../shared/message.js';
import { safeReport } from '../../shared/report.js';
import { MAX_DELAY } from '../../shared/signal.js';
import { createBodyGuard } from '../http/body-guard.js';
import {
  answer,
  fetchRoute,
  stoppedBodyAnswers,
  unprefixed,
  type BodyResult,
  type Core,
  type FetchRoute,
  type Incoming,
  type Outgoing,
} from '../http/route.js';
import { allowedOrigin, checkAllowedOrigins, crossSite, preflightAnswer, withCors } from './route-origins.js';

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
   * `request` malformed, `method` not GET/POST, `origin` a cross-site request or preflight (403),
   * `body` bad JSON, not JSON (415), not in within `bodyTimeoutMs` (408) or refused for want of
   * room (503), `user` resolveUser threw or returned something that is not an id,
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
   * A number must be a whole number up to 2^53 - 1 (larger ids: return them as strings).
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
   * (`'https://shop.example.com'`), or a function of the request's `Origin`. Their requests get
   * the CORS headers that let the page read the answer, cookies included
   * (`Access-Control-Allow-Origin: <origin>`, `Access-Control-Allow-Credentials: true`), and
   * their preflights (`OPTIONS`) a 204. Browsers' cross-site requests are refused (403)
   * otherwise: same-origin and same-site pages, mini-program hosts (no `Origin`), apps and
   * servers need nothing here.
   * @default [] (none)
   */
  allowedOrigins?: readonly string[] | ((origin: string) => boolean);
  /**
   * Milliseconds a POST may take to deliver its body, counted from when the route starts
   * reading it; past it the answer is 408 and the connection is closed. @default 8000
   */
  bodyTimeoutMs?: number;
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
const optionKeys = ['exchange', 'resolveUser', 'onError', 'allowedOrigins', 'bodyTimeoutMs'];
// Token route bodies in flight at once, across requests: 1,024 of the largest (16 KiB).
const MAX_BUFFERED = 1024 * MAX_BODY;

/** What resolveUser returned, for the message: the kind of value, and an object's first keys (never its values). */
function describeUser(user: unknown): string {
  if (typeof user === 'object' && user !== null && !Array.isArray(user)) {
    const keys = Object.keys(user).slice(0, 6);
    const hint = keys.indexOf('id') >= 0 ? ' (return its .id)' : '';
    return 'an object' + (keys.length ? ' with keys ' + keys.join(', ') : '') + hint;
  }
  if (typeof user === 'bigint') return 'a bigint (return String(id))';
  if (typeof user === 'number' && Number.isInteger(user))
    return (
      'the number ' +
      String(user) +
      ', beyond 2^53 - 1: a JavaScript number that large has lost its last digits, so distinct users share it (return the id as a string, as your database holds it)'
    );
  if (typeof user === 'number' && Number.isFinite(user)) return 'the number ' + String(user) + ', not a whole number';
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
 * are refused: no other site can make a signed-in user's browser ask for tokens, but the pages
 * you list in `allowedOrigins` (their answers carry CORS headers). A POST body not in within
 * `bodyTimeoutMs` gets 408.
 * @example
 * export const GET = createTokenRoute({ exchange, resolveUser: async (request) => (await getSession(request))?.userId });
 */
export function createTokenRoute<R = Request>(options: TokenRouteOptions<R>): TokenRoute {
  const o = options || ({} as TokenRouteOptions<R>);
  if (typeof o !== 'object') fail('createTokenRoute needs an options object: { exchange, resolveUser }');
  checkKeys(o, optionKeys, 'createTokenRoute option');
  const given = o.exchange;
  if (typeof given !== 'function' && typeof given?.getToken !== 'function')
    fail('createTokenRoute needs exchange: createTokenExchange({ baseUrl, accessKey, secretKey })');
  if (typeof o.resolveUser !== 'function') fail('createTokenRoute needs resolveUser: (request) => the signed-in user id, or null');
  if (o.onError !== undefined && typeof o.onError !== 'function') fail('onError must be a function (error, info) => void; got ' + describeValue(o.onError));
  const { resolveUser } = o;
  const allowed = checkAllowedOrigins(o.allowedOrigins);
  const bodyTimeoutMs = milliseconds('bodyTimeoutMs', o.bodyTimeoutMs ?? 8000, 1, MAX_DELAY, 8000);
  // The webhook route's guard: a POST that stalls its body is answered 408 and let go.
  const bodies = createBodyGuard(bodyTimeoutMs, MAX_BUFFERED);
  const stopped = stoppedBodyAnswers(bodyTimeoutMs);
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
  const refuse = (out: Outgoing, error: unknown, stage: TokenRouteErrorInfo['stage']) => {
    report(error, { stage, status: out.status });
    return out;
  };
  const refuseCrossSite = (foreign: string) =>
    refuse(
      CROSS_SITE,
      new Error('refused ' + foreign + ': a page on another site may not ask for tokens; if it is yours, list its origin in allowedOrigins'),
      'origin',
    );

  // Every answer to an allowed origin carries its CORS headers, errors included (the page reads
  // a 401 as a 401, not as a network error).
  const core: Core = async (incoming) => {
    const origin = allowedOrigin(incoming, allowed);
    if (incoming.method === 'OPTIONS' && incoming.header('access-control-request-method') !== undefined)
      return origin ? preflightAnswer(incoming, origin) : refuseCrossSite('a preflight (OPTIONS) from an origin not in allowedOrigins');
    const out = await serve(incoming);
    return origin ? withCors(out, origin) : out;
  };

  async function serve(incoming: Incoming): Promise<Outgoing> {
    if (incoming.malformedHost) return refuse(BAD_REQUEST, new Error('malformed Host header'), 'request');
    const method = incoming.method;
    if (method !== 'GET' && method !== 'POST') return refuse(NOT_ALLOWED, new Error('method ' + method + ' is not allowed; use GET or POST'), 'method');
    const foreign = crossSite(incoming, allowed);
    if (foreign) return refuseCrossSite(foreign);
    const type = incoming.header('content-type');
    // A form or text/plain POST needs no CORS consent from a browser: never let one through.
    if (method === 'POST' && type !== undefined && !JSON_TYPE.test(type)) {
      return refuse(
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
        const ticket = bodies.open();
        let body: BodyResult;
        try {
          body = await incoming.body(MAX_BODY, ticket);
        } finally {
          ticket.close();
        }
        if (!body.ok) {
          if (body.reason === 'timeout' || body.reason === 'busy') {
            const why =
              body.reason === 'timeout' ? 'did not arrive within bodyTimeoutMs (' + bodyTimeoutMs + ' ms)' : 'found no room among the bodies in flight';
            return refuse(
              stopped[body.reason],
              new Error('the POST body ' + why + '; answered ' + stopped[body.reason].status + ' and closed the connection'),
              'body',
            );
          }
          if (body.reason !== 'consumed') return refuse(BAD_BODY, new Error('unreadable or too large body'), 'body');
        } else if (body.bytes.length > 0) {
          if (type === undefined)
            return refuse(NOT_JSON, new Error('refused a POST with a body but no Content-Type: send JSON (Content-Type: application/json)'), 'body');
          try {
            value = JSON.parse(new TextDecoder().decode(body.bytes));
          } catch (error) {
            return refuse(BAD_BODY, error, 'body');
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
      return refuse(USER_FAILED, error, 'user');
    }
    if (user === null || user === undefined || user === '') return SIGNED_OUT;
    // Anything else would become a shared id: every user's object is "[object Object]", and
    // ids past 2^53 have already lost digits (9007199254740993 reads as 9007199254740992).
    if (!(typeof user === 'string' || (typeof user === 'number' && Number.isSafeInteger(user)))) {
      const problem =
        'resolveUser returned ' +
        describeUser(user) +
        "; return the signed-in user's id as a non-empty string or a whole number up to 2^53 - 1 (e.g. req.user.id), or null when nobody is signed in";
      return refuse(USER_FAILED, new ConfigError(problem), 'user');
    }
    let token: Awaited<ReturnType<TokenSource['getToken']>>;
    try {
      exchange ||= (given as () => TokenSource)();
      token = await exchange.getToken(String(user), rejected ? { forceRefresh, rejected } : { forceRefresh });
    } catch (error) {
      // A ConfigError is ours to fix (e.g. a user id over 128 characters); the rest is upstream.
      const ours = isChannelError(error) && error.code === 'CONFIG_ERROR';
      return refuse(ours ? EXCHANGE_CONFIG : EXCHANGE_FAILED, error, 'exchange');
    }
    const left = typeof token.expiresAt === 'number' ? Math.floor((token.expiresAt - Date.now()) / 1000) : token.expiresIn;
    return answer(200, { access_token: token.accessToken, token_type: 'Bearer', expires_in: Math.max(0, left) }, NO_STORE);
  }
  return fetchRoute(core);
}
