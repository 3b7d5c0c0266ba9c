import { isChannelError } from '../errors/ChannelError.js';
import { ConfigError } from '../errors/ConfigError.js';
import { answer, fetchRoute, messageOf, type Core, type FetchRoute, type Outgoing } from './route.js';

/** What the token route needs from `createTokenExchange(...)` (or your own source of user tokens). */
export interface TokenSource {
  getToken(externalUserId: string, options: { forceRefresh: boolean }): Promise<{ accessToken: string; expiresIn: number; expiresAt?: number }>;
}

/** Where the token route stopped, for `onError`. */
export interface TokenRouteErrorInfo {
  /** `request` malformed, `method` not GET/POST, `user` resolveUser threw, `body` bad JSON, `exchange` getToken failed. */
  stage: 'request' | 'method' | 'user' | 'body' | 'exchange';
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
   * Failures, without the token. @default one console.error line for `user` and `exchange`, nothing for the rest
   */
  onError?: (error: unknown, info: TokenRouteErrorInfo) => void;
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

function defaultReport(error: unknown, info: TokenRouteErrorInfo): void {
  if (info.stage !== 'user' && info.stage !== 'exchange') return;
  console.error('[channel-sdk] token route ' + info.stage + ' -> ' + info.status + ': ' + messageOf(error));
}

const FORCE = /(?:^|&)force=(?:1|true)(?:&|$)/;

/**
 * The partner's side of the client's `tokenProvider`, ready-made: `GET` (or `POST`) answers
 * `{ access_token, token_type: 'Bearer', expires_in }` for the signed-in user, with
 * `Cache-Control: no-store`. A forced refresh is asked for with `?force=1` in the URL, or
 * `{"forceRefresh":true}` as a POST body. 401 when `resolveUser` finds nobody; 502 when the exchange fails
 * (500 for a user id it refuses), with the details in `onError`, never the token.
 * @example
 * export const GET = createTokenRoute({ exchange, resolveUser: async (request) => (await getSession(request))?.userId });
 */
export function createTokenRoute<R = Request>(options: TokenRouteOptions<R>): TokenRoute {
  const o = options || ({} as TokenRouteOptions<R>);
  const given = o.exchange;
  if (typeof given !== 'function' && typeof given?.getToken !== 'function') throw new ConfigError('createTokenRoute needs exchange: createTokenExchange({ baseUrl, accessKey, secretKey })');
  if (typeof o.resolveUser !== 'function') throw new ConfigError('createTokenRoute needs resolveUser: (request) => the signed-in user id, or null');
  const { resolveUser } = o;
  let exchange: TokenSource | undefined = typeof given === 'function' ? undefined : given;
  const report = o.onError || defaultReport;
  const fail = (out: Outgoing, error: unknown, stage: TokenRouteErrorInfo['stage']) => {
    try {
      report(error, { stage, status: out.status });
    } catch {
      // A reporter that throws changes no answer.
    }
    return out;
  };

  const core: Core = async (incoming) => {
    if (incoming.malformedHost) return fail(BAD_REQUEST, new Error('malformed Host header'), 'request');
    const method = incoming.method;
    if (method !== 'GET' && method !== 'POST') return fail(NOT_ALLOWED, new Error('method ' + method + ' is not allowed; use GET or POST'), 'method');
    let forceRefresh = FORCE.test(incoming.query());
    if (method === 'POST' && !forceRefresh) {
      // A body the framework parsed already (express.json()...) is used as it is.
      let value = incoming.parsed();
      if (value === undefined) {
        const body = await incoming.body(MAX_BODY);
        if (!body.ok) {
          if (body.reason !== 'consumed') return fail(BAD_BODY, new Error('unreadable or too large body'), 'body');
        } else if (body.bytes.length > 0) {
          try {
            value = JSON.parse(new TextDecoder().decode(body.bytes));
          } catch (error) {
            return fail(BAD_BODY, error, 'body');
          }
        }
      }
      forceRefresh = typeof value === 'object' && value !== null && (value as { forceRefresh?: unknown }).forceRefresh === true;
    }
    let user: string | number | null | undefined;
    try {
      user = await resolveUser(incoming.native as R);
    } catch (error) {
      return fail(USER_FAILED, error, 'user');
    }
    if (user === null || user === undefined || user === '') return SIGNED_OUT;
    let token: Awaited<ReturnType<TokenSource['getToken']>>;
    try {
      exchange ||= (given as () => TokenSource)();
      token = await exchange.getToken(String(user), { forceRefresh });
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
