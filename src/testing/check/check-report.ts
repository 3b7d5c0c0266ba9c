// What `checkTokenRoute` and `checkWebhook` (and `channel-sandbox check`) report, and the one
// way they call the partner's app: a bounded fetch that never throws and times the answer.
import { isHttpUrl, readAnswer, trimAnswer } from '../http-io.js';
import { fail } from '../../shared/check.js';
import { credentialsIn, maskReach, redactReport, redactSecrets, urlSecrets } from './secret-forms.js';

/** `pass` ✓, `fail` ✗ (the exit code is 1), `warn` ⚠ (worth a look, not a failure), `skip` – (not run, and why). */
export type CheckStatus = 'pass' | 'fail' | 'warn' | 'skip';

/** One line of a check report. */
export interface CheckResult {
  /** Stable id, e.g. `force-query`, `raw-bytes`. */
  id: string;
  /** What is checked, e.g. `?force=1 gives a new token`. */
  title: string;
  status: CheckStatus;
  /** What was seen. Never a token, a secret or a signature. */
  detail: string;
  /** What to change, for `fail` and `warn`. */
  fix?: string;
}

/** What a check resolves to; `ok` is false when any line failed. */
export interface CheckReport<Target extends string = 'token-route' | 'webhook'> {
  /** `token-route` or `webhook` (doctor's parts also `service` and `redis`). */
  target: Target;
  url: string;
  ok: boolean;
  /** How many lines passed, failed, warned, were skipped. */
  counts: Record<CheckStatus, number>;
  checks: CheckResult[];
}

const MARK: Record<CheckStatus, string> = { pass: '✓', fail: '✗', warn: '⚠', skip: '–' };

/**
 * The report as `channel-sandbox check` prints it: a heading, one line per check (`✓`, `✗`,
 * `⚠`, `–`) with what to fix under a failure or warning, and a count.
 */
export function formatCheckReport(report: CheckReport): string {
  return [`channel-sandbox check ${report.target} ${report.url}`, ...checkLines(report.checks), countLine(report.checks)].join('\n');
}

/** One line per check, with what to fix under a failure or warning. */
export function checkLines(checks: CheckResult[]): string[] {
  const lines: string[] = [];
  for (const check of checks) {
    lines.push(`${MARK[check.status]} ${check.title}: ${check.detail}`);
    if (check.fix && (check.status === 'fail' || check.status === 'warn')) lines.push(`    fix: ${check.fix}`);
  }
  return lines;
}

/** How many lines passed, failed, warned, were skipped. */
export function countsOf(checks: CheckResult[]): Record<CheckStatus, number> {
  const counts: Record<CheckStatus, number> = { pass: 0, fail: 0, warn: 0, skip: 0 };
  for (const check of checks) counts[check.status]++;
  return counts;
}

/** `8 checks: 7 passed, 0 failed, 1 warning` */
export function countLine(checks: CheckResult[]): string {
  const { pass, fail: failed, warn, skip } = countsOf(checks);
  const parts = [`${pass} passed`, `${failed} failed`, ...(warn ? [`${warn} warning${warn === 1 ? '' : 's'}`] : []), ...(skip ? [`${skip} skipped`] : [])];
  return `${checks.length} checks: ${parts.join(', ')}`;
}

/** Collects the lines of one report, in the order they are added. */
export function createReport<Target extends string>(target: Target, url: string) {
  const checks: CheckResult[] = [];
  const add = (status: CheckStatus) => (id: string, title: string, detail: string, fix?: string) =>
    void checks.push({ id, title, status, detail, ...(fix ? { fix } : {}) });
  return {
    pass: add('pass'),
    fail: add('fail'),
    warn: add('warn'),
    skip: add('skip'),
    done(): CheckReport<Target> {
      const counts = countsOf(checks);
      // The URL's query may hold a credential: masked in its heading and wherever a line quotes it.
      return redactReport({ target, url, ok: counts.fail === 0, counts, checks }, urlSecrets(url));
    },
  };
}

/** What a check adds its lines through. */
export type Reporter = Pick<ReturnType<typeof createReport>, 'pass' | 'fail' | 'warn' | 'skip'>;

/** An answer from the partner's app, or why there was none; `ms` from sending to the whole body. */
export type Answer =
  | { status: number; headers: Headers; text: string; ms: number; error?: undefined; secrets?: string[] }
  | { error: string; ms: number; status?: undefined; headers?: undefined; text?: undefined };

/** Bodies larger than this are not read whole (a token route or webhook answer is small). */
const ANSWER_LIMIT = 64 * 1024;

/**
 * One request to the partner's app, bounded by `timeoutMs`; never throws, never follows a redirect.
 * The answer remembers the credentials sent (every header but accept, origin…) and `init.secrets`:
 * {@link describeAnswer} masks them, in every form an app could echo them in.
 */
export async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array; secrets?: string[] },
  timeoutMs: number,
): Promise<Answer> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, {
      method: init.method ?? 'GET',
      headers: init.headers,
      body: init.body as BodyInit | undefined,
      redirect: 'manual',
      signal,
    });
    const text = await readAnswer(response, ANSWER_LIMIT);
    // readAnswer keeps what arrived when the read stops: a body cut off by the timeout is no answer.
    if (signal.aborted)
      return {
        error: `no answer within ${timeoutMs} ms: HTTP ${response.status} and ${text.length ? 'the start of a body' : 'its headers'} came, then nothing`,
        ms: ms(),
      };
    const secrets = [...credentialsIn(init.headers), ...urlSecrets(url), ...(init.secrets ?? [])];
    return { status: response.status, headers: response.headers, text, ms: ms(), ...(secrets.length ? { secrets } : {}) };
  } catch (error) {
    return { error: failure(error, timeoutMs), ms: ms() };
  }
}

/** How {@link call}'s error starts when this machine does not trust the server's certificate. */
export const CERTIFICATE = 'this machine does not trust its TLS certificate';
/** What to do about it. */
export const certificateFix =
  'give Node the CA that signed it: NODE_EXTRA_CA_CERTS=/path/to/ca.pem npx channel-sandbox …; or use the http:// URL on your own machine';

/** `connection refused`, `no answer within 8000 ms`… */
function failure(error: unknown, timeoutMs: number): string {
  if ((error as Error).name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused (is your app running on that port?)';
  if (cause?.code === 'ECONNRESET' || cause?.code === 'UND_ERR_SOCKET') return 'the connection was closed without an answer';
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(cause?.code ?? '')) return `${CERTIFICATE}: ${cause?.message}`;
  return 'connection failed: ' + (cause?.message ?? (error as Error).message);
}

/** `HTTP 401 {"error":"not signed in"}`, or why there was no answer. */
export function describeAnswer(answer: Answer): string {
  if (answer.error !== undefined) return answer.error;
  const secrets = answer.secrets ?? [];
  // Whitespace runs made one (a line break kept: a secret may be wrapped there), and only as much as can be shown.
  const near = (text: string) =>
    text
      .replace(/[ \t]*\n\s*/g, '\n')
      .replace(/[ \t]+/g, ' ')
      .slice(0, maskReach(300, secrets));
  const body = trimAnswer(answer.text, (text) => redactSecrets(near(text), secrets));
  return `HTTP ${answer.status}${body ? ' ' + (body.length > 120 ? body.slice(0, 119) + '…' : body) : ''}`;
}

/**
 * Where a 3xx answer to `from` sends the caller: its origin and path, masked (never its query, where
 * a login page's `next=` or an echoed session goes); `moved` when it is the same path elsewhere
 * (http to https, another host) or with(out) a trailing slash: the route moved, the user is not signed out.
 */
export function redirectOf(answer: Answer, from: string): { to: string; moved: boolean } | undefined {
  if (answer.status === undefined || answer.status < 300 || answer.status >= 400) return undefined;
  let target: URL;
  try {
    target = new URL(answer.headers.get('location') ?? '', from);
  } catch {
    return undefined;
  }
  const source = new URL(from);
  if (target.href === source.href) return undefined; // no Location
  const to = redactSecrets(target.origin + target.pathname, answer.secrets ?? []);
  // The same path with or without a trailing slash (Next.js, Fastify, a proxy's 308 to the canonical form) moved too.
  const bare = (path: string) => path.replace(/\/+$/, '');
  const moved = bare(target.pathname) === bare(source.pathname) && (target.origin !== source.origin || target.pathname !== source.pathname);
  return { to: to.length > 120 ? to.slice(0, 119) + '…' : to, moved };
}

export const is2xx = (answer: Answer): boolean => answer.status !== undefined && answer.status >= 200 && answer.status < 300;

/** `12 ms`, `1.2 s` */
export const duration = (ms: number): string => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

export function median(values: number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)] : 0;
}

/** Parsed JSON, or undefined for anything else. */
export function safeJson(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? '');
  } catch {
    return undefined;
  }
}

/** `value` when it is an http(s) URL, else a ConfigError naming the option. */
export function httpUrl(value: unknown, name: string): string {
  if (!isHttpUrl(value))
    fail(`${name} must be an http(s) URL like http://127.0.0.1:3000/channel-token; got ${typeof value === 'string' ? JSON.stringify(value) : typeof value}`);
  return value;
}
