// checkTokenRoute's probes: the CORS check, where a token sits in an answer, the sandbox's
// verdict on a token, and the credentials checked.
import { fail } from '../../shared/check.js';
import { call, httpUrl, safeJson, type Answer, type Reporter } from './check-report.js';
import { HEADER_NAME, readLimited } from '../http-io.js';
import type { Sandbox, TokenClaims, TokenVerdict } from '../sandbox/types.js';

/** Per call; the client's own `tokenTimeout` is 10 s. */
export const CALL_TIMEOUT_MS = 15_000;
/** The most of a sandbox's answer to a token check that is read. */
const VERDICT_LIMIT = 64 * 1024;
const FOREIGN_ORIGINS = ['https://evil.example', 'null'];

export type Verify = (token: string) => Promise<TokenVerdict>;

/** A token read from a route's answer and checked, or what was wrong. */
export type Got = { token: string; claims: TokenClaims; expiredByControl: boolean; shape: Shape; path?: string; answer: Answer };
export type Read = Got | { problem: string; fix: string; answer: Answer };

/** Other origins must not be allowed to read the route's answers (which hold a user's token). */
export async function checkCors(r: Reporter, url: string, credentials: Record<string, string>): Promise<void> {
  const title = 'CORS grants no other origin';
  const requested = Object.keys(credentials).filter((name) => name !== 'cookie');
  const granted: string[] = [];
  for (const origin of FOREIGN_ORIGINS) {
    const probes: Array<[string, Promise<Answer>]> = [
      ['GET', call(url, { headers: { accept: 'application/json', ...credentials, origin } }, CALL_TIMEOUT_MS)],
      [
        'a preflight',
        call(
          url,
          {
            method: 'OPTIONS',
            headers: {
              origin,
              'access-control-request-method': 'GET',
              ...(requested.length ? { 'access-control-request-headers': requested.join(', ') } : {}),
            },
          },
          CALL_TIMEOUT_MS,
        ),
      ],
    ];
    for (const [what, pending] of probes) {
      const answer = await pending;
      const allowed = answer.headers?.get('access-control-allow-origin');
      if (allowed === null || allowed === undefined) continue;
      if (allowed.trim() === '*' || allowed.trim() === origin) {
        const withCredentials = answer.headers?.get('access-control-allow-credentials') === 'true' ? ' with Access-Control-Allow-Credentials: true' : '';
        granted.push(`Origin: ${origin} → Access-Control-Allow-Origin: ${allowed.trim()}${withCredentials} on ${what}`);
      }
    }
  }
  if (granted.length) {
    r.fail(
      'cors',
      title,
      granted.join('; '),
      "allow only your front end's own origin (or send no CORS headers when the page and the route share one): a site that may read this route's answers gets your signed-in users' tokens",
    );
  } else {
    r.pass('cors', title, `Origin: ${FOREIGN_ORIGINS.join(' and ')} got no Access-Control-Allow-Origin for them, on GET and on a preflight`);
  }
}

/**
 * A browser's cross-site request with the session cookie (what a page on another site can make a
 * signed-in user's browser send, without reading the answer) must get no token.
 */
export async function checkCrossSite(r: Reporter, forceUrl: string, credentials: Record<string, string>): Promise<void> {
  const title = 'cross-site requests are refused';
  const names = Object.keys(credentials);
  if (!names.length) return r.skip('cross-site', title, 'no --header credentials to send');
  if (!names.includes('cookie'))
    return r.pass('cross-site', title, `the credentials are ${names.join(', ')}: headers another site's page cannot send without a CORS preflight (above)`);
  const sent = `a ?force=1 GET with the cookie from another site (Sec-Fetch-Site: cross-site, Origin: ${FOREIGN_ORIGINS[0]})`;
  const answer = await call(
    forceUrl,
    {
      headers: {
        accept: '*/*',
        ...credentials,
        origin: FOREIGN_ORIGINS[0],
        'sec-fetch-site': 'cross-site',
        'sec-fetch-mode': 'no-cors',
        'sec-fetch-dest': 'image',
      },
    },
    CALL_TIMEOUT_MS,
  );
  if (answer.error !== undefined) return r.fail('cross-site', title, `${sent}: ${answer.error}`, 'start your app and pass the URL of its token route');
  if (answer.status >= 200 && answer.status < 300 && tokenIn(answer.text))
    return r.warn(
      'cross-site',
      title,
      `${sent} got HTTP ${answer.status} with a token: that site cannot read it (CORS, above), but it can make your signed-in users' browsers ask for tokens, forced ones included`,
      'refuse requests with Sec-Fetch-Site: cross-site (createTokenRoute answers 403; allowedOrigins lists your own pages on other sites). A SameSite=Lax or Strict session cookie, which browsers leave out of such requests, protects you too',
    );
  r.pass('cross-site', title, `${sent}: HTTP ${answer.status}`);
}

/** Where a route's answer holds its token: the contract's `{ access_token }`, or a shape a tokenProvider reading that misses. */
export type Shape = 'access_token' | 'envelope' | 'elsewhere' | 'text';

const JWT = /^eyJ[\w-]+\.[\w-]+\.[\w-]*$/;

/**
 * The token in an answer's text, and where it sits: `access_token`, the service's envelope
 * (`data.access_token`), a JWT elsewhere in the JSON (`path`: `token`, `data.jwt`…), or the
 * bare JWT as the whole body; undefined when there is none.
 */
export function tokenIn(text: string | undefined): { token: string; shape: Shape; path?: string } | undefined {
  const body = safeJson(text);
  const o = body as { access_token?: unknown; code?: unknown; data?: { access_token?: unknown } } | null | undefined;
  if (typeof o !== 'object' || o === null) {
    const bare = (typeof body === 'string' ? body : (text ?? '')).trim();
    return JWT.test(bare) ? { token: bare, shape: 'text' } : undefined;
  }
  if (typeof o.access_token === 'string' && o.access_token) return { token: o.access_token, shape: 'access_token' };
  if ((o.code === 0 || o.code === '0') && typeof o.data?.access_token === 'string' && o.data.access_token)
    return { token: o.data.access_token, shape: 'envelope' };
  const found = findJwt(o, [], 3);
  return found && { token: found.token, shape: 'elsewhere', path: found.path };
}

/** The first JWT-shaped string in `value`, at most `depth` levels down, and its path (`data.token`). */
function findJwt(value: unknown, path: string[], depth: number): { token: string; path: string } | undefined {
  if (typeof value === 'string') return JWT.test(value) ? { token: value, path: path.join('.') } : undefined;
  if (typeof value !== 'object' || value === null || depth === 0) return undefined;
  for (const [key, item] of Object.entries(value).slice(0, 50)) {
    const found = findJwt(item, [...path, key], depth - 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * The fix for a 2xx answer without a token: an HTML page is not the route (a proxy's or an SSO's
 * sign-in page, the front end's index.html served for every path), an empty body no answer at all.
 */
export function noTokenFix(answer: Answer): string {
  if (/html/i.test(answer.headers?.get('content-type') ?? '') || /^\s*</.test(answer.text ?? ''))
    return 'an HTML page answered, not your route: a sign-in page (pass a signed-in user\'s cookie, and the one a proxy or SSO in front of the route wants: --header "cookie: session=…") or your front end\'s index.html (pass the URL of the backend route itself)';
  if (!answer.text) return 'answer HTTP 200 with the JSON body { access_token: token } (createTokenRoute does): this answer had no body';
  return 'answer { access_token: token } (createTokenRoute does): your tokenProvider returns that string';
}

/** `{ access_token }`, `{ code: 0, data: { access_token } }`, `{ data: { token } }`, `the bare token as text`. */
export function describeShape(found: { shape: Shape; path?: string }): string {
  if (found.shape === 'text') return 'the bare token as text';
  const path = found.shape === 'access_token' ? ['access_token'] : found.shape === 'envelope' ? ['data', 'access_token'] : (found.path ?? '').split('.');
  const inner = path.reduceRight((held, key) => (held ? `${key}: { ${held} }` : key), '');
  return found.shape === 'envelope' ? `{ code: 0, ${inner} }` : `{ ${inner} }`;
}

/** The sandbox's own check of a token, from the object or over its control API. */
export function verifier(sandbox: Pick<Sandbox, 'url' | 'verifyToken'> | string): { verify: Verify; where: string } {
  if (typeof sandbox === 'object' && sandbox !== null && typeof sandbox.verifyToken === 'function' && typeof sandbox.url === 'string') {
    return { verify: async (token) => (token ? sandbox.verifyToken(token) : { valid: false, reason: 'not a JWT' }), where: sandbox.url };
  }
  if (typeof sandbox !== 'string') fail('sandbox must be the Sandbox from startSandbox() or its URL, e.g. http://127.0.0.1:8787');
  const base = httpUrl(sandbox, 'sandbox').replace(/\/+$/, '');
  const verify: Verify = async (token) => {
    let response: Response;
    try {
      response = await fetch(base + '/__sandbox/verify', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: token || '-' }),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      fail(
        `no sandbox at ${base} (${cause?.code === 'ECONNREFUSED' ? 'connection refused' : (cause?.message ?? (error as Error).message)}): start one with channel-sandbox start, point your app's token exchange at it, and pass its URL`,
      );
    }
    // A verdict is under 1 KB: whatever answers more is not the sandbox, and is not read on.
    const { text, over } = await readLimited(response, VERDICT_LIMIT);
    if (over) fail(`${base} answered HTTP ${response.status} with more than 64 KiB to a token check: is it a channel-sandbox?`);
    const value = safeJson(text) as (TokenVerdict & { error?: string }) | undefined;
    if (!response.ok || typeof value?.valid !== 'boolean') {
      fail(
        `${base} did not check the token (HTTP ${response.status}${value?.error ? ': ' + value.error : ''}): is it a channel-sandbox of this version, with its control API on?`,
      );
    }
    return value;
  };
  return { verify, where: base };
}

/** Header names (lower-case) and values, checked: a line break would let a value add headers. */
export function checkHeaders(headers: unknown): Record<string, string> {
  if (headers === undefined) return {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) fail("headers must be an object such as { cookie: 'session=…' }");
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) fail(`headers: "${name}" is not a header name`);
    if (typeof value !== 'string' || /[\r\n\0]/.test(value)) fail(`headers: the value of ${name} must be a string on one line`);
    out[name.toLowerCase()] = value;
  }
  return out;
}

/** The fix for a token route's answer that is not 2xx (`redirect`: where a 3xx sends it). */
export function routeFailedFix(status: number, redirect: { to: string; moved: boolean } | undefined): string {
  if (redirect?.moved)
    return `your route moved: pass the URL it redirects to as --token-route (${redirect.to}); doctor follows no redirect, and your front end should not need one either`;
  // A redirect (to a login page) is how many apps say "not signed in" too.
  if (status === 401 || status === 403 || (status >= 300 && status < 400))
    return 'pass the credentials your front end sends for a signed-in user: --header "cookie: session=…" (headers: { cookie } from Node)';
  if (status === 404 || status === 405)
    return 'nothing answers GET at this path: pass the URL where your app mounts its token route (the recipes: /channel-token; the Next.js Pages Router: /api/channel-token)';
  return "look at your app's log: the route failed (is its token exchange pointed at the service, with its access and secret keys?)";
}
