// `channel-sandbox doctor`: a partner's whole integration in one run, each part checked when it
// is given: the service (keys and clock), the token route and the webhook receiver (the checks of
// `channel-sandbox check`), Redis. One report; nothing secret in it.
import { checkLines, countLine, countsOf, type CheckReport, type CheckStatus } from './check-report.js';
import { runTokenRouteChecks, type Issuer } from './check-token-route.js';
import { checkWebhook } from './check-webhook.js';
import { checkRedis, type RedisTarget } from './doctor-redis.js';
import { checkService, jwtPayload, type ServiceResult } from './doctor-service.js';
import { redactReport as scrub, secretPieces } from './secret-forms.js';
import { verifier, type Verify } from './token-route-probes.js';

/** What doctor checks: each part is checked when given. */
export interface DoctorOptions {
  /** The service's base URL, or a sandbox's. */
  service?: string;
  accessKey?: string;
  secretKey?: string;
  /** The external user id of the probe exchange. */
  user?: string;
  tokenRoute?: string;
  /** A signed-in user's credentials for the token route. */
  headers?: Record<string, string>;
  webhookUrl?: string;
  webhookSecret?: string;
  /** One target per Redis node (a Cluster's each), the inbox's stats on the first; a promise while the CLI connects. */
  redis?: RedisTarget[] | Promise<RedisTarget[]>;
  /** More text never to print (a Redis password), besides the keys, secrets, header values and tokens. */
  secrets?: string[];
  /** Where a value came from when not an option (`CHANNEL_BASE_URL`), shown beside it. */
  from?: Partial<Record<'service' | 'redis', string>>;
}

export type DoctorPart = 'service' | 'token-route' | 'webhook' | 'redis';

/** doctor's report: every part's lines, `ok` when none failed. */
export interface DoctorReport {
  ok: boolean;
  counts: Record<CheckStatus, number>;
  /** How long the run took. */
  ms: number;
  parts: Array<CheckReport<DoctorPart>>;
}

/** What a route's tokens are checked by when the service is not a sandbox doctor can ask. */
function shapeOnly(seen: Map<string, number>, skewMs: number): Verify {
  return async (token) => {
    const claims = /^eyJ[\w-]+\.[\w-]+\.[\w-]*$/.test(token) ? jwtPayload(token) : undefined;
    if (!claims) return { valid: false, reason: 'not a JWT' };
    if (typeof claims.exp === 'number' && claims.exp * 1000 <= Date.now() + skewMs) return { valid: false, reason: 'token expired' };
    if (!seen.has(token)) seen.set(token, seen.size + 1);
    const sub = typeof claims.sub === 'string' ? claims.sub : 'the user';
    return { valid: true, claims: { sub, iat: Number(claims.iat) || 0, exp: Number(claims.exp) || 0, jti: String(seen.get(token)) } };
  };
}

/** The issuer the token route's tokens are checked against: the sandbox's control API, else their shape. */
async function issuerFor(service: ServiceResult | undefined, url: string | undefined): Promise<Issuer> {
  if (service?.sandbox && url) {
    const { verify } = verifier(url);
    try {
      await verify('');
      return {
        verify,
        issued: 'a JWT this sandbox issued',
        notIssued: 'a token this sandbox issued',
        fix: `point your app's token exchange at the sandbox: baseUrl ${url} with the access and secret keys it printed`,
      };
    } catch {
      // Its control API is off or out of reach: the tokens' shape is what can be checked.
    }
  }
  return {
    verify: shapeOnly(new Map(), service?.skewMs ?? 0),
    issued: service ? "a JWT (its signature is the service's to check)" : 'a JWT (not verified: no --service given)',
    notIssued: 'a JWT',
    fix: "answer the access_token the service's token endpoint returned, as it is",
  };
}

const part = <T extends DoctorPart>(target: T, url: string, why: string): CheckReport<T> => ({
  target,
  url,
  ok: true,
  counts: { pass: 0, fail: 0, warn: 0, skip: 1 },
  checks: [{ id: target, title: 'not checked', status: 'skip', detail: why }],
});

/** Runs every part given; never throws for what it finds (bad options are the CLI's to refuse). */
export async function runDoctor(o: DoctorOptions): Promise<DoctorReport> {
  const started = performance.now();
  const given = [o.secretKey, o.webhookSecret, ...secretPieces(Object.values(o.headers ?? {})), ...(o.secrets ?? [])];
  const secrets = new Set<string>(given.filter((s): s is string => !!s && s.length >= 4));
  const service = o.service
    ? await checkService({ url: o.service, accessKey: o.accessKey, secretKey: o.secretKey, user: o.user ?? 'channel-sandbox-doctor' })
    : undefined;
  if (service?.token) secrets.add(service.token);

  const routeCheck = async (): Promise<CheckReport<DoctorPart>> => {
    if (!o.tokenRoute) return part('token-route', '', 'no --token-route URL');
    const issuer = await issuerFor(service, o.service);
    const verify = issuer.verify;
    const report = await runTokenRouteChecks(o.tokenRoute, o.headers ?? {}, 10_000, { ...issuer, verify: (token) => (secrets.add(token), verify(token)) });
    const token = report.checks.find((c) => c.id === 'token');
    // A route whose exchange fails answers 5xx: the keys line above says why, when they are the same keys.
    if (service?.keysFailed && token?.status === 'fail' && / HTTP 5\d\d/.test(' ' + token.detail))
      token.detail += ' (the keys line above: is your backend using the same keys?)';
    return report;
  };
  const webhookCheck = async (): Promise<CheckReport<DoctorPart>> => {
    if (!o.webhookUrl) return part('webhook', '', 'no --webhook-url URL');
    return checkWebhook({ url: o.webhookUrl, secret: o.webhookSecret as string });
  };
  const [route, webhook] = await Promise.all([routeCheck(), webhookCheck()]);
  // After the webhook part: the inbox's state then includes the pushes doctor sent.
  const redis: Array<CheckReport<DoctorPart>> = [];
  for (const target of (await o.redis) ?? []) redis.push(await checkRedis(target));
  const parts = [
    service?.report ?? part('service', '', 'no --service URL'),
    route,
    webhook,
    ...(redis.length ? redis : [part('redis', '', 'no --redis URL')]),
  ].map((p) => scrub(p, [...secrets]));
  const checks = parts.flatMap((p) => p.checks);
  const counts = countsOf(checks);
  return { ok: counts.fail === 0, counts, ms: Math.round(performance.now() - started), parts };
}

const TITLES: Record<DoctorPart, string> = { service: 'service', 'token-route': 'token route', webhook: 'webhook receiver', redis: 'Redis' };

/** The report as doctor prints it: a heading per part, one line per check, the fix under each ✗ and ⚠. */
export function formatDoctorReport(report: DoctorReport, from: DoctorOptions['from'] = {}): string {
  const lines = ['channel-sandbox doctor'];
  for (const p of report.parts) {
    const source = p.target === 'service' || p.target === 'redis' ? from[p.target] : undefined;
    lines.push('', `${TITLES[p.target]}${p.url ? ' ' + p.url : ''}${source && p.url ? `, from ${source}` : ''}`, ...checkLines(p.checks));
  }
  lines.push('', `${countLine(report.parts.flatMap((p) => p.checks))} (${(report.ms / 1000).toFixed(1)} s)`);
  return lines.join('\n');
}
