/** One row of the demo's timeline, as the e2e test reads it from the page. */
export interface Row {
  /** `run`: a run's header row (its verdict), across every lane. */
  lane: 'page' | 'sdk' | 'backend' | 'service' | 'run';
  kind: string;
  at: number;
  /** `<burst>.<i>/<n>`: the call a data-call row belongs to (page, SDK and service lanes). */
  call?: string;
  /** The SDK's requestId, on SDK rows: one per call. */
  requestId?: number;
  attempt?: number;
  /** The sandbox's token number. */
  jti?: string;
  status?: number;
  reason?: string;
  text: string;
}

const is =
  (lane: Row['lane'], ...kinds: string[]) =>
  (r: Row) =>
    r.lane === lane && kinds.includes(r.kind);
const exchanged = is('backend', 'exchange', 'exchange-forced', 'exchange-cached');
/** The backend's token route asked the service (rather than answering from its cache). */
const asked = is('backend', 'exchange', 'exchange-forced');

/**
 * Each effect needs its own cause shown above it: at every effect row, the rows above hold at
 * least as many causes as effects so far (the n-th SDK 401 needs n service 401s above it...).
 */
const causes: Array<[string, (r: Row) => boolean, (r: Row) => boolean]> = [
  ['an SDK attempt above each data call the service answered', is('sdk', 'request'), (r) => r.lane === 'service' && r.kind.startsWith('data-')],
  ['a page call above each first attempt', is('page', 'call'), (r) => is('sdk', 'request')(r) && r.attempt === 1],
  ["the service's 401 above the SDK's", is('service', 'data-401'), is('sdk', 'unauthorized')],
  ["the service's 200 above the SDK's", is('service', 'data-ok'), is('sdk', 'response')],
  ["the SDK's response above the page's result", is('sdk', 'response'), is('page', 'call-ok')],
  ['a tokenProvider call above each token route row', is('sdk', 'provider'), (r) => r.lane === 'backend' && r.kind.startsWith('exchange')],
  // The token route's row is stamped when it started (a span): it asks, then the service issues.
  ['an exchange above each token the service issued', asked, is('service', 'token-issued')],
  ["the backend's exchange above the SDK's new token", exchanged, is('sdk', 'token')],
  ['a 401 above each replay', is('sdk', 'unauthorized'), (r) => is('sdk', 'retry')(r) && r.reason === 'unauthorized'],
  ['a 401 above each auth:failed', is('sdk', 'unauthorized'), is('sdk', 'auth-failed')],
  ['a push request above each push the service sends', is('page', 'push'), is('service', 'push-sent')],
  ['a push sent above each push the backend receives', is('service', 'push-sent'), is('backend', 'push-accepted', 'push-rejected', 'push-error', 'push-slow')],
  ["the backend's 2xx answer above each delivered push", is('backend', 'push-answer'), is('service', 'push-ok')],
];

/** Everything on the timeline that is shown before its cause; empty when the order is causal. */
export function causalViolations(rows: Row[]): string[] {
  const problems: string[] = [];
  const where = (r: Row | undefined) => (r ? `"${r.text}" (row ${rows.indexOf(r) + 1})` : 'a missing row');
  const above = (a: Row | undefined, b: Row | undefined, what: string) => {
    if (!a || !b || rows.indexOf(a) > rows.indexOf(b)) problems.push(`${what}: ${where(a)} should be above ${where(b)}`);
  };

  rows.forEach((r, i) => {
    if (i > 0 && r.at < rows[i - 1].at) problems.push(`row ${i + 1} "${r.text}" is shown below a later row`);
  });

  for (const [what, cause, effect] of causes) {
    let seen = 0;
    let done = 0;
    for (const r of rows) {
      if (cause(r)) seen++;
      if (effect(r) && ++done > seen) problems.push(`${what}: ${where(r)} has none`);
    }
  }

  // Per call: its attempts, their 401s and replays, and the token each attempt carried.
  const calls = [...new Set(rows.filter((r) => r.call).map((r) => r.call as string))];
  for (const call of calls) {
    const of = (lane: Row['lane'], kind: string, attempt?: number) =>
      rows.find((r) => r.call === call && r.lane === lane && r.kind === kind && (attempt === undefined || r.attempt === attempt));
    const answers = rows.filter((r) => r.call === call && r.lane === 'service' && r.kind.startsWith('data-'));
    const requests = rows.filter((r) => r.call === call && r.lane === 'sdk' && r.kind === 'request');
    for (const request of requests) {
      const attempt = request.attempt as number;
      const answer = answers[attempt - 1];
      above(of('page', 'call'), request, `call ${call}: the page's call before attempt ${attempt}`);
      above(request, answer, `call ${call}: attempt ${attempt} before the service answers it`);
      above(answer, of('sdk', answer?.status === 401 ? 'unauthorized' : 'response', attempt), `call ${call}: the service's answer before the SDK sees it`);
      if (attempt > 1) {
        const unauthorized = of('sdk', 'unauthorized', attempt - 1);
        const retry = of('sdk', 'retry', attempt);
        if (retry?.reason === 'unauthorized') {
          above(unauthorized, retry, `call ${call}: the replay follows its own 401`);
          above(retry, request, `call ${call}: the retry note before the replay`);
        }
      }
      // The exchange that produced the token an attempt carried is above that attempt
      // (unless the token came before the timeline was cleared: then neither row is shown).
      const exchange = answer?.jti ? rows.find((r) => exchanged(r) && r.jti === answer.jti) : undefined;
      const issued = answer?.jti ? rows.find((r) => is('service', 'token-issued')(r) && r.jti === answer.jti) : undefined;
      if (answer?.jti && (exchange || issued)) {
        above(exchange, request, `call ${call}: token #${answer.jti}'s exchange before attempt ${attempt}, which carried it`);
        above(issued, request, `call ${call}: token #${answer.jti} issued before attempt ${attempt}`);
        if (exchange && asked(exchange)) above(exchange, issued, `call ${call}: the exchange that asked for token #${answer.jti} before the service issued it`);
        if (
          attempt > 1 &&
          of('sdk', 'retry', attempt)?.reason === 'unauthorized' &&
          exchange &&
          exchange.kind !== 'exchange-forced' &&
          exchange.kind !== 'exchange-cached'
        ) {
          problems.push(`call ${call}: the replay carried token #${answer.jti}, which came from ${where(exchange)}, not a forced exchange`);
        }
      }
    }
    const ids = new Set(rows.filter((r) => r.call === call && r.lane === 'sdk').map((r) => r.requestId));
    if (ids.size !== 1 || ids.has(undefined)) problems.push(`call ${call}: its SDK rows carry requestIds ${[...ids].join(', ')}, not one`);
    const result = rows.find((r) => r.call === call && r.lane === 'page' && (r.kind === 'call-ok' || r.kind === 'call-failed'));
    if (result)
      for (const r of rows.filter((x) => x.call === call && x !== result && x.lane !== 'page'))
        above(r, result, `call ${call}: everything about it before the page's result`);
  }
  return problems;
}
