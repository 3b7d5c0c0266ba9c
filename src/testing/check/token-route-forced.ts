// checkTokenRoute's forced calls: `?force=1` and a POSTed `{"forceRefresh":true}` give a token
// no earlier answer held, and a forced call that names the token just answered as `rejected`
// (what the client sends after a 401) never gets that token back.
import { tokenFingerprint } from '../../shared/fingerprint.js';
import { call, duration, type Answer, type Reporter } from './check-report.js';
import { CALL_TIMEOUT_MS, type Got, type Read } from './token-route-probes.js';

/** What the forced calls share with the rest of checkTokenRoute's run. */
export interface Forced {
  r: Reporter;
  read(answer: Answer, label: string): Promise<Read>;
  /** Every token answered so far, in order, and its label (`#4`). */
  seen: Map<string, string>;
  label(got: Got): string;
  /** The signed-in user the first answer's token is for. */
  user: string;
  /** How long a forced call may keep answering a token another forced call got just before. */
  windowMs: number;
  cacheControl(answer: Answer, what: string): void;
}

/** A forced call, in one form, answers a token no earlier answer held (a forced refresh shared for a moment passes). */
export async function checkForced(
  { r, read, seen, label, user, windowMs, cacheControl }: Forced,
  id: 'force-query' | 'force-post',
  what: string,
  send: () => Promise<Answer>,
): Promise<void> {
  const titleOf = `${what} gives a new token`;
  const started = performance.now();
  let wait = 500;
  let shared = 0;
  let repeated = '';
  for (;;) {
    const answer = await send();
    if (id === 'force-post' && (answer.status === 404 || answer.status === 405)) {
      return r.skip(id, titleOf, `the route does not take POST (HTTP ${answer.status}): fine while your tokenProvider asks with ?force=1`);
    }
    const got = await read(answer, id === 'force-query' ? '?force=1' : 'POST force');
    if ('problem' in got) return r.fail(id, titleOf, got.problem, got.fix);
    if (shared === 0) cacheControl(got.answer, what);
    if (got.claims.sub !== user)
      return r.fail(
        id,
        titleOf,
        `token #${got.claims.jti} is for "${got.claims.sub}", the plain call's for "${user}"`,
        'force a refresh for the same signed-in user',
      );
    const before = seen.get(got.token);
    if (before === undefined) {
      const latest = [...seen.values()].at(-1);
      const name = label(got);
      const note = shared
        ? ` (the first ${shared} answer${shared === 1 ? '' : 's'} within ${duration(Math.round(performance.now() - started))} repeated token ${repeated}: a forced refresh shared for a moment is fine)`
        : '';
      return r.pass(id, titleOf, `token ${name} (the cached one was ${latest}) in ${duration(got.answer.ms)}${note}`);
    }
    const left = windowMs - (performance.now() - started);
    if (left <= 0) {
      const fix =
        id === 'force-query'
          ? 'when the query has force=1, call exchange.getToken(user, { forceRefresh: true }) (createTokenRoute does): the service keeps older tokens valid, so the cached one may be the very token that just got a 401'
          : 'read forceRefresh from the JSON body and call exchange.getToken(user, { forceRefresh: true }) (createTokenRoute does)';
      return r.fail(
        id,
        titleOf,
        `answered the cached token ${before} again (${shared + 1} forced calls over ${duration(Math.round(performance.now() - started))})`,
        fix,
      );
    }
    shared++;
    repeated = before;
    await new Promise((resolve) => setTimeout(resolve, Math.min(wait, left)));
    wait = 1000; // then once a second: a shared forced refresh ends within the window (createTokenExchange's forceRefreshWindow)
  }
}

/**
 * Right after the forced calls, `?force=1&rejected=<fingerprint>` naming the newest token: what
 * the client asks after that token got a 401. A route that drops `rejected` hands it back from
 * its exchange's forceRefreshWindow (5 s by default), and the client's one replay fails.
 */
export async function checkRejected({ r, read, seen, label, cacheControl }: Forced, withForce: URL, credentials: Record<string, string>): Promise<void> {
  const title = 'a forced call never answers the token it names as rejected';
  const [newest, name] = [...seen.entries()].at(-1) as [string, string];
  const target = new URL(withForce);
  target.searchParams.set('rejected', tokenFingerprint(newest));
  const got = await read(await call(target.href, { headers: { accept: 'application/json', ...credentials } }, CALL_TIMEOUT_MS), '?force=1&rejected');
  const sent = `?force=1&rejected=<token ${name}'s fingerprint>, as the client asks after a 401`;
  if ('problem' in got) return r.fail('rejected', title, `${sent}: ${got.problem}`, got.fix);
  cacheControl(got.answer, '?force=1&rejected');
  if (got.token === newest)
    return r.fail(
      'rejected',
      title,
      `${sent}: answered token ${name}, the very token it named`,
      'pass rejected on to your exchange: exchange.getToken(user, { forceRefresh: true, rejected }) (createTokenRoute reads it from the query or the JSON body); otherwise a forced refresh within forceRefreshWindow (5 s) hands back the token a 401 just refused, and the replay fails',
    );
  const again = seen.get(got.token);
  r.pass('rejected', title, `${sent}: token ${again ?? label(got)}${again ? ' (an earlier one)' : ''}, not ${name}`);
}
