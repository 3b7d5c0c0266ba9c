import { checkKeys, fail, milliseconds } from '../../shared/check.js';
import {
  call,
  CERTIFICATE,
  certificateFix,
  createReport,
  describeAnswer,
  duration,
  httpUrl,
  is2xx,
  median,
  redirectOf,
  type Answer,
  type CheckReport,
} from './check-report.js';
import { credentialsIn, redactReport } from './secret-forms.js';
import { checkForced, checkRejected, type Forced } from './token-route-forced.js';
import {
  CALL_TIMEOUT_MS,
  checkCors,
  checkCrossSite,
  checkHeaders,
  describeShape,
  noTokenFix,
  routeFailedFix,
  tokenIn,
  verifier,
  type Got,
  type Read,
  type Verify,
} from './token-route-probes.js';
import type { Sandbox, TokenClaims } from '../sandbox/types.js';

/** Options of {@link checkTokenRoute}. */
export interface TokenRouteCheckOptions {
  /** Your running app's token route, e.g. `http://127.0.0.1:3000/channel-token`. */
  url: string;
  /**
   * The sandbox your app's token exchange is configured with (its `baseUrl`, AK and SK): the
   * `Sandbox` from `startSandbox()`, or its URL (then its control API checks the tokens).
   */
  sandbox: Pick<Sandbox, 'url' | 'verifyToken'> | string;
  /**
   * A signed-in user's credentials, sent the way your front end sends them.
   * @example { cookie: 'session=abc' } or { authorization: 'Bearer <your session token>' }
   * @default {} (the route must then answer 401: the check says so)
   */
  headers?: Record<string, string>;
  /**
   * How long a forced call may keep answering the token another forced refresh obtained just
   * before (routes that share one forced refresh among concurrent callers), in ms.
   * @default 10000
   */
  forceWindowMs?: number;
}

const OPTION_KEYS = ['url', 'sandbox', 'headers', 'forceWindowMs'];

/** What to do when the route gave no answer: start it, make it answer in time, or trust its certificate. */
const unansweredFix = (error: string) =>
  error.startsWith(CERTIFICATE)
    ? certificateFix
    : error.startsWith('no answer within')
      ? "answer (headers and the whole body) well within the client's tokenTimeout (10 s): look at what the route waits for"
      : 'start your app and pass the URL of its token route';
const TOKEN_TIMEOUT_MS = 10_000;
const SLOW_MS = 2_000;

/** Who checks the tokens a route answers, and how the report words them. */
export interface Issuer {
  verify: Verify;
  /** What a good token is: `a JWT this sandbox issued`. */
  issued: string;
  /** What a bad one is not: `a token this sandbox issued`. */
  notIssued: string;
  /** What to change when a token is not one. */
  fix: string;
}

/**
 * Checks your running app's token route against the tokenProvider contract, from outside, as
 * `channel-sandbox check token-route <url>` does: it answers `{ access_token }` holding a JWT
 * this sandbox issued; `?force=1` and a POSTed `{"forceRefresh":true}` give a new token;
 * a forced call never answers the token it names as `rejected`; `Cache-Control: no-store`; no
 * token without the user's credentials; no CORS for other origins, nor a token to another site's
 * request; the time per call. Resolves to one line per check (never a token); throws
 * `ConfigError` for bad options or when the sandbox cannot be reached.
 * @example
 * const report = await checkTokenRoute({ url: app + '/channel-token', sandbox, headers: { cookie: 'session=demo' } });
 * if (!report.ok) console.log(formatCheckReport(report));
 */
export async function checkTokenRoute(options: TokenRouteCheckOptions): Promise<CheckReport> {
  if (typeof options !== 'object' || options === null) fail('checkTokenRoute needs { url, sandbox }');
  checkKeys(options, OPTION_KEYS, 'checkTokenRoute option');
  const url = httpUrl(options.url, 'url');
  const credentials = checkHeaders(options.headers);
  const windowMs = milliseconds('forceWindowMs', options.forceWindowMs ?? 10_000, 0, 600_000);
  const { verify, where } = verifier(options.sandbox);
  await verify(''); // reaches the sandbox first: a wrong address is a ConfigError, not a report
  const report = await runTokenRouteChecks(url, credentials, windowMs, {
    verify,
    issued: 'a JWT this sandbox issued',
    notIssued: 'a token this sandbox issued',
    fix: `point your app's token exchange at the sandbox: baseUrl ${where} with the access and secret keys it printed`,
  });
  // A line may quote a header the route answered (Cache-Control, Content-Type…): it may echo a credential too.
  return redactReport(report, credentialsIn(credentials));
}

/** checkTokenRoute's lines for checked options, with the tokens checked by `issuer` (doctor's too). */
export async function runTokenRouteChecks(url: string, credentials: Record<string, string>, windowMs: number, issuer: Issuer): Promise<CheckReport> {
  const r = createReport('token-route', url);
  const names = Object.keys(credentials);
  const given = names.length ? `with ${names.join(', ')}` : 'with no credentials (no --header given)';
  const seen = new Map<string, string>(); // token -> "#4"
  const times: Array<[number, string]> = [];
  const withForce = new URL(url);
  withForce.searchParams.set('force', '1');

  async function read(answer: Answer, label: string): Promise<Read> {
    if (answer.error !== undefined) return { problem: answer.error, fix: unansweredFix(answer.error), answer };
    times.push([answer.ms, label]);
    if (!is2xx(answer)) {
      const redirect = redirectOf(answer, url);
      return {
        problem: `${redirect ? `HTTP ${answer.status} to ${redirect.to}` : describeAnswer(answer)} ${given}`,
        fix: routeFailedFix(answer.status, redirect),
        answer,
      };
    }
    const found = tokenIn(answer.text);
    if (!found)
      return {
        problem: `${describeAnswer(answer)}: no token in it (not { access_token } nor { code: 0, data: { access_token } })`,
        fix: noTokenFix(answer),
        answer,
      };
    if (/^bearer\s/i.test(found.token)) return { problem: 'access_token starts with "Bearer "', fix: 'answer the token alone: the SDK adds "Bearer "', answer };
    const verdict = await issuer.verify(found.token);
    if (!verdict.valid && verdict.reason !== 'token expired (expireTokens)') {
      const expired = verdict.reason === 'token expired';
      return {
        problem: expired ? 'the access_token has expired' : `the access_token is not ${issuer.notIssued} (${verdict.reason})`,
        fix: expired ? 'drop a cached token before it expires (createTokenExchange keeps a 60 s margin)' : issuer.fix,
        answer,
      };
    }
    return { ...found, claims: verdict.claims as TokenClaims, expiredByControl: !verdict.valid, answer };
  }
  const label = (got: Got) => {
    const name = '#' + got.claims.jti;
    seen.set(got.token, name);
    return name;
  };
  const plain = () => call(url, { headers: { accept: 'application/json', ...credentials } }, CALL_TIMEOUT_MS);

  // 1. A token for the signed-in user, and where the answer holds it.
  const first = await read(await plain(), 'plain');
  const title = 'answers a token for the signed-in user';
  if ('problem' in first) {
    r.fail('token', title, first.problem, first.fix);
    if (first.answer.error === undefined) await checkCors(r, url, credentials);
    for (const [id, what] of [
      ['shape', 'answers { access_token }'],
      ['no-store', 'Cache-Control: no-store'],
      ['cache', 'plain calls share a cached token'],
      ['force-query', '?force=1 gives a new token'],
      ['force-post', 'POST {"forceRefresh":true} gives a new token'],
      ['rejected', 'a forced call never answers the token it names as rejected'],
      ['credentials', "no token without the user's credentials"],
      ['cross-site', 'cross-site requests are refused'],
    ] as const) {
      r.skip(id, what, 'no token to compare with');
    }
    return r.done();
  }
  const user = first.claims.sub;
  const firstName = label(first);
  const shape = describeShape(first);
  if (first.expiredByControl) {
    r.warn(
      'token',
      title,
      `HTTP ${first.answer.status} ${shape} in ${duration(first.answer.ms)}: token ${firstName} for "${user}", which \`channel-sandbox expire\` expired; the forced calls below must replace it`,
    );
  } else r.pass('token', title, `HTTP ${first.answer.status} ${shape} in ${duration(first.answer.ms)}: ${issuer.issued}, for "${user}" (token ${firstName})`);
  const shapeTitle = 'answers { access_token }';
  const reads = "a tokenProvider that returns (await response.json()).access_token, as the README's does, gets undefined";
  if (first.shape === 'access_token') r.pass('shape', shapeTitle, '{ access_token }: the string your tokenProvider returns');
  else if (first.shape === 'envelope')
    r.warn(
      'shape',
      shapeTitle,
      `the service's whole envelope ${shape}: ${reads}`,
      'answer { access_token } (createTokenRoute does), or return data.access_token from your tokenProvider',
    );
  else
    r.fail(
      'shape',
      shapeTitle,
      first.shape === 'text'
        ? `the bare token ${/^\s*"/.test(first.answer.text ?? '') ? 'as a JSON string, not an object' : 'as text, not JSON'} (Content-Type: ${first.answer.headers?.get('content-type') ?? 'none'}): ${reads}`
        : `${shape}: the JWT is in "${first.path}", not in "access_token": ${reads}`,
      'answer JSON { access_token: token } (createTokenRoute does: it answers { access_token, token_type, expires_in })',
    );

  // 2. Plain calls: the same (cached) token.
  const second = await read(await plain(), 'plain');
  const noStore: string[] = [];
  const cacheControl = (answer: Answer, what: string) => {
    if (!/(^|,)\s*no-store\s*(,|$)/i.test(answer.headers?.get('cache-control') ?? ''))
      noStore.push(`${what}: ${answer.headers?.get('cache-control') ?? 'no Cache-Control'}`);
  };
  cacheControl(first.answer, 'plain call');
  if ('problem' in second) r.fail('cache', 'plain calls share a cached token', 'a second plain call: ' + second.problem, second.fix);
  else if (second.token === first.token) r.pass('cache', 'plain calls share a cached token', `a second call got token ${firstName} again`);
  else
    r.warn(
      'cache',
      'plain calls share a cached token',
      `each call got a new token (${firstName}, then ${label(second)}): nothing caches, so every page load asks the service`,
      'cache per user until shortly before expiry (createTokenExchange does)',
    );

  // 3 to 5. Forced calls, in both forms: a token no earlier answer held; then one naming that token as rejected.
  const forced: Forced = { r, read, seen, label, user, windowMs, cacheControl };
  await checkForced(forced, 'force-query', '?force=1', () =>
    call(withForce.href, { headers: { accept: 'application/json', ...credentials } }, CALL_TIMEOUT_MS),
  );
  await checkForced(forced, 'force-post', 'POST {"forceRefresh":true}', () =>
    call(
      url,
      { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json', ...credentials }, body: '{"forceRefresh":true}' },
      CALL_TIMEOUT_MS,
    ),
  );
  await checkRejected(forced, withForce, credentials);
  if (noStore.length) {
    r.fail(
      'no-store',
      'Cache-Control: no-store',
      noStore.join('; '),
      'send Cache-Control: no-store with every token answer: a browser or proxy cache could hand back a token the service already refused',
    );
  } else {
    r.pass('no-store', 'Cache-Control: no-store', 'on every token answer');
  }

  // 6. Without the credentials: no token, plain or forced.
  const anonymous: string[] = [];
  for (const [what, target] of [
    ['plain', url],
    ['?force=1', withForce.href],
  ] as const) {
    const answer = await call(target, { headers: { accept: 'application/json' } }, CALL_TIMEOUT_MS);
    if (answer.error !== undefined) anonymous.push(`${what}: ${answer.error}`);
    else if (is2xx(answer) && tokenIn(answer.text)) anonymous.push(`${what}: HTTP ${answer.status} with a token`);
    else anonymous.push(`${what}: HTTP ${answer.status}`);
  }
  const leaked = anonymous.filter((line) => line.endsWith('with a token'));
  if (!names.length) {
    r.fail(
      'credentials',
      "no token without the user's credentials",
      `answered a token to a request with no credentials at all (${anonymous.join(', ')})`,
      'answer 401 when nobody is signed in, then pass a signed-in user\'s credentials to this check with --header "cookie: session=…"',
    );
  } else if (leaked.length) {
    r.fail(
      'credentials',
      "no token without the user's credentials",
      `without ${names.join(', ')}: ${anonymous.join(', ')}`,
      "find the user from the request's own credentials (session cookie, Authorization) and answer 401 when there are none",
    );
  } else {
    r.pass('credentials', "no token without the user's credentials", `without ${names.join(', ')}: ${anonymous.join(', ')}`);
  }

  // 7. Other sites: no CORS for them, and no token to their requests.
  await checkCors(r, url, credentials);
  await checkCrossSite(r, withForce.href, credentials);
  // 8. Time per call.
  const slowest = times.reduce((a, b) => (b[0] > a[0] ? b : a), [0, ''] as [number, string]);
  const timing = `median ${duration(median(times.map((t) => t[0])))}, slowest ${duration(slowest[0])} (${slowest[1]}) over ${times.length} calls`;
  if (slowest[0] >= TOKEN_TIMEOUT_MS) r.fail('timing', 'time per call', timing, `the client stops waiting after tokenTimeout (10 s by default): answer faster`);
  else if (slowest[0] >= SLOW_MS)
    r.warn(
      'timing',
      'time per call',
      timing,
      'every page waits for this route before its first call: look at what is slow (the exchange itself usually takes milliseconds)',
    );
  else r.pass('timing', 'time per call', timing);
  return r.done();
}
