/** The checker the browser test relies on catches the orders the QA report found (and passes a causal one). */
import { describe, expect, test } from 'vitest';
import { causalViolations, type Row } from './causal.js';

let clock = 0;
const r = (lane: Row['lane'], kind: string, extra: Partial<Row> = {}): Row => ({ lane, kind, at: ++clock, text: `${lane} ${kind}`, ...extra });
const call = '1.1/1';

/** Sign in and call once: provider -> exchange (stamped at its start) -> token issued -> new token -> attempt -> 200 -> result. */
function firstCall(): Row[] {
  return [
    r('page', 'call', { call }),
    r('sdk', 'provider'),
    r('backend', 'exchange', { jti: '1' }),
    r('service', 'token-issued', { jti: '1' }),
    r('sdk', 'token', { jti: '1' }),
    r('sdk', 'request', { call, requestId: 1, attempt: 1 }),
    r('service', 'data-ok', { call, jti: '1', status: 200 }),
    r('sdk', 'response', { call, requestId: 1, attempt: 1, status: 200 }),
    r('page', 'call-ok', { call }),
  ];
}

/** After expiry, two calls: two 401s, one forced exchange, two replays. */
function burst(): Row[] {
  const a = '2.1/2';
  const b = '2.2/2';
  return [
    r('page', 'call', { call: a }),
    r('page', 'call', { call: b }),
    r('sdk', 'request', { call: a, requestId: 2, attempt: 1 }),
    r('sdk', 'request', { call: b, requestId: 3, attempt: 1 }),
    r('service', 'data-401', { call: a, jti: '1', status: 401 }),
    r('service', 'data-401', { call: b, jti: '1', status: 401 }),
    r('sdk', 'unauthorized', { call: a, requestId: 2, attempt: 1 }),
    r('sdk', 'provider'),
    r('sdk', 'unauthorized', { call: b, requestId: 3, attempt: 1 }),
    r('backend', 'exchange-forced', { jti: '2' }),
    r('service', 'token-issued', { jti: '2' }),
    r('sdk', 'token', { jti: '2' }),
    r('sdk', 'retry', { call: a, requestId: 2, attempt: 2, reason: 'unauthorized' }),
    r('sdk', 'request', { call: a, requestId: 2, attempt: 2 }),
    r('sdk', 'retry', { call: b, requestId: 3, attempt: 2, reason: 'unauthorized' }),
    r('sdk', 'request', { call: b, requestId: 3, attempt: 2 }),
    r('service', 'data-ok', { call: a, jti: '2', status: 200 }),
    r('service', 'data-ok', { call: b, jti: '2', status: 200 }),
    r('sdk', 'response', { call: a, requestId: 2, attempt: 2, status: 200 }),
    r('page', 'call-ok', { call: a }),
    r('sdk', 'response', { call: b, requestId: 3, attempt: 2, status: 200 }),
    r('page', 'call-ok', { call: b }),
  ];
}

/** Moves the row of `kind` (in `lane`) to just after the row of `after`, restamping times in order. */
function move(rows: Row[], which: (x: Row) => boolean, after: (x: Row) => boolean): Row[] {
  const out = rows.filter((x) => !which(x));
  out.splice(out.findIndex(after) + 1, 0, rows.find(which) as Row);
  return out.map((x, i) => ({ ...x, at: i }));
}

describe('causalViolations', () => {
  test('a causal timeline has none', () => {
    expect(causalViolations([...firstCall(), ...burst()])).toEqual([]);
  });

  test('the token issued shown above the exchange that asked for it (QA report, issue #26: the exchange was stamped at its end)', () => {
    const rows = move(
      firstCall(),
      (x) => x.kind === 'exchange',
      (x) => x.kind === 'token-issued',
    );
    expect(causalViolations(rows)).toEqual([
      'an exchange above each token the service issued: "service token-issued" (row 3) has none',
      'call 1.1/1: the exchange that asked for token #1 before the service issued it: "backend exchange" (row 4) should be above "service token-issued" (row 3)',
    ]);
  });

  test('the token exchange shown after the new token and the first attempt (QA report, flow 1)', () => {
    const rows = move(
      firstCall(),
      (x) => x.kind === 'exchange',
      (x) => x.kind === 'request',
    );
    expect(causalViolations(rows)).toContain('the backend\'s exchange above the SDK\'s new token: "sdk token" (row 4) has none');
  });

  test('the one forced exchange shown after every replay (QA report, flow 2)', () => {
    const rows = move(
      burst(),
      (x) => x.kind === 'exchange-forced',
      (x) => x.kind === 'request' && x.attempt === 2 && x.call === '2.2/2',
    );
    expect(causalViolations(rows).filter((v) => v.includes("token #2's exchange"))).toHaveLength(2);
  });

  test("the service's 200 shown after the page's result (QA report), and a replay above its own 401", () => {
    const late = move(
      firstCall(),
      (x) => x.kind === 'data-ok',
      (x) => x.kind === 'call-ok',
    );
    expect(causalViolations(late).some((v) => v.startsWith("the service's 200 above the SDK's"))).toBe(true);
    const early = move(
      burst(),
      (x) => x.kind === 'unauthorized' && x.call === '2.2/2',
      (x) => x.kind === 'request' && x.attempt === 2 && x.call === '2.2/2',
    );
    expect(causalViolations(early).some((v) => v.startsWith('call 2.2/2: the replay follows its own 401'))).toBe(true);
  });

  test('rows shown out of their own time order', () => {
    const rows = firstCall();
    [rows[2], rows[3]] = [rows[3], rows[2]];
    expect(causalViolations(rows)[0]).toBe('row 4 "backend exchange" is shown below a later row');
  });
});
