// The demo page. It uses channel-sdk as any app would: imported by package name.
// What each flow claims and how its verdict is worked out: docs/guide/demo.md.
import { createClient, isChannelError } from 'channel-sdk';

const $ = (id) => document.getElementById(id);
const laneOrder = ['page', 'sdk', 'backend', 'service'];
const tone = {
  'data-ok': 'ok',
  'call-ok': 'ok',
  response: 'ok',
  'push-ok': 'ok',
  'push-accepted': 'ok',
  'push-answer': 'ok',
  'token-issued': 'ok',
  exchange: 'ok',
  'exchange-cached': 'ok',
  'data-401': 'bad',
  'data-error': 'bad',
  unauthorized: 'bad',
  'call-failed': 'bad',
  'auth-failed': 'bad',
  'push-failed': 'bad',
  'push-rejected': 'bad',
  'push-error': 'bad',
  'push-answer-bad': 'bad',
  'token-refused': 'bad',
  'exchange-failed': 'bad',
  token: 'refresh',
  'exchange-forced': 'refresh',
  provider: 'refresh',
  retry: 'warn',
  control: 'warn',
  'push-slow': 'warn',
  'push-sent': 'warn',
};
/** The counters of a run; the first ten are shown, `auth-failed` only in verdicts. */
const counterNames = ['calls', '401', 'forced', 'ahead', 'replay', 'ok', 'failed', 'provider', 'push-ok', 'push-failed'];
const timeline = $('timeline');
const stripPrefix = (message) => message.replaceAll('[channel-sdk] ', '');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- one clock for every lane
// The servers stamp their rows with performance.timeOrigin + performance.now() on their side;
// the page reads the same clock. It measures its offset to the demo server at load (and on
// Clear): over 8 round trips, the one with the smallest delay gives server time minus the
// trip's midpoint, within half that delay. An offset smaller than that bound cannot be told
// from zero: the page and the servers then share this machine's clock and no offset is applied.
const hr = () => performance.timeOrigin + performance.now();
let offset = 0;
async function alignClock() {
  let best = { rtt: Infinity, offset: 0 };
  for (let i = 0; i < 8; i++) {
    const sent = hr();
    const { now } = await (await fetch('/api/clock', { cache: 'no-store' })).json();
    const back = hr();
    if (back - sent < best.rtt) best = { rtt: back - sent, offset: now - (sent + back) / 2 };
  }
  const bound = best.rtt / 2;
  offset = Math.abs(best.offset) > bound ? best.offset : 0;
  const ms = (v) => `${v >= 0 ? '+' : ''}${v.toFixed(2)} ms`;
  $('clock-note').textContent =
    `Rows are ordered by when they started; a row that spans time (the backend's token route) says how long it took. The servers stamp theirs; page and SDK rows use this page's clock, ` +
    (offset
      ? `shifted by ${ms(offset)} to the servers' (measured ±${bound.toFixed(2)} ms).`
      : `the same as the servers' (measured offset ${ms(best.offset)}, within ±${bound.toFixed(2)} ms of zero).`);
}
const now = () => hr() + offset;

// ---------------------------------------------------------------- runs: counters and verdicts
// Each flow button starts a run: counters from zero, a header row on the timeline that gets the
// verdict when the run ends, and the status line (kept in view) saying what is in flight.
let runNo = 0;
/** The latest run: { no, flow, title, at, busy, counts, header }. */
let current;
/** When each run started, to give a row from the servers (arriving late) the run it belongs to. */
const runStarts = [];
const runAt = (at) => runStarts.findLast((r) => r.at <= at)?.no;

function count(name) {
  if (!current) return;
  current.counts[name]++;
  showCounts();
}
function showCounts() {
  for (const name of counterNames) document.querySelector(`[data-testid="count-${name}"]`).textContent = String(current?.counts[name] ?? 0);
}
function setStatus(text, state) {
  const status = $('status');
  fill(status, text);
  status.className = `status ${state}`;
  status.dataset.state = state;
}
function setBusy(busy) {
  for (const button of document.querySelectorAll('button[data-flow], #clear')) button.disabled = busy;
  $('sticky').setAttribute('aria-busy', String(busy));
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
const partText = {
  calls: (n) => plural(n, 'call', 'calls'),
  401: (n) => `${n} × 401`,
  forced: (n) => plural(n, 'forced refresh', 'forced refreshes'),
  ahead: (n) => `${plural(n, 'refresh', 'refreshes')} ahead`,
  replay: (n) => plural(n, 'replay', 'replays'),
  ok: (n) => `${n} ok`,
  failed: (n) => `${n} failed`,
  provider: (n) => plural(n, 'tokenProvider call', 'tokenProvider calls'),
  'auth-failed': (n) => `${n} auth:failed`,
  'push-ok': (n) => `${plural(n, 'push', 'pushes')} delivered`,
  'push-failed': (n) => `${plural(n, 'push', 'pushes')} failed`,
};
/**
 * The verdict of a run: the counters in `show`, ✓ when every counter in `expected` has its
 * value, else ✗ with what was expected (a counter that is off is shown even if not in `show`).
 */
function verdictOf(counts, show, expected, note = '') {
  const wrong = Object.entries(expected).filter(([name, value]) => counts[name] !== value);
  const names = [...show, ...wrong.map(([name]) => name).filter((name) => !show.includes(name))];
  const text = names.map((name) => partText[name](counts[name])).join(' · ') + note;
  return {
    ok: wrong.length === 0,
    text: wrong.length ? `${text} ✗ (expected ${wrong.map(([name, value]) => partText[name](value)).join(', ')})` : `${text} ✓`,
  };
}

/** Runs one flow as run N: `body` does the steps and returns the verdict. One run at a time. */
async function run(flow, title, body) {
  if (current?.busy) return;
  const at = now();
  const no = ++runNo;
  current = { no, flow, title, at, busy: true, counts: Object.fromEntries([...counterNames, 'auth-failed'].map((name) => [name, 0])) };
  runStarts.push({ no, at });
  const r = current;
  showCounts();
  setBusy(true);
  setStatus(`run ${no} · flow ${flow} in flight: ${title}…`, 'busy');
  r.header = row('run', 'run', `run ${no} · flow ${flow}: ${title}`, { flow }, at);
  let verdict;
  try {
    verdict = await body(r);
  } catch (error) {
    verdict = { ok: false, text: `stopped: ${isChannelError(error) ? `${error.code}: ${stripPrefix(error.message)}` : (error?.message ?? String(error))} ✗` };
  } finally {
    r.busy = false;
    setBusy(false);
  }
  r.verdict = verdict.text;
  if (r.header?.isConnected) {
    const line = document.createElement('div');
    line.className = `verdict ${verdict.ok ? 'ok' : 'bad'}`;
    line.dataset.testid = 'verdict';
    fill(line, verdict.text);
    r.header.querySelector('.entry').append(line);
    r.header.dataset.verdict = verdict.text;
    r.header.dataset.ok = String(verdict.ok);
  }
  setStatus(`run ${no} · flow ${flow}: ${verdict.text}`, verdict.ok ? 'ok' : 'bad');
}

// ---------------------------------------------------------------- the timeline
let clearedAt = 0;

function clockText(at) {
  // Always hours, minutes and seconds: a minute's rollover must not read backwards.
  const date = new Date(at);
  return `${date.toTimeString().slice(0, 8)}.${String(date.getMilliseconds()).padStart(3, '0')}`;
}

/**
 * Puts `text` in `el` so that lines break only between words: a word with a hyphen or a slash
 * (an id, a path, a URL) is kept whole, and a long path or URL may break only after a / ? or &;
 * `5 × 401` and the end of a call like `({ forceRefresh: true })` stay on one line. Plain words
 * have no break opportunity inside; one wider than the whole lane is the only thing broken
 * (overflow-wrap: break-word), rather than leave its box.
 */
function fill(el, text) {
  el.textContent = '';
  let from = 0;
  for (const glued of text.matchAll(/\d+ × \d+|\S+ \}\)/g)) {
    words(el, text.slice(from, glued.index));
    el.append(whole(glued[0]));
    from = glued.index + glued[0].length;
  }
  words(el, text.slice(from));
}
function words(el, text) {
  for (const part of text.split(/(\s+)/)) {
    if (!part) continue;
    if (/\s/.test(part) || !/[-/?&]/.test(part)) {
      el.append(part);
      continue;
    }
    const pieces = part.length > 16 && part.includes('/') ? part.split(/(?<=[/?&])(?![/?&])/) : [part];
    pieces.forEach((piece, i) => {
      if (i) el.append(document.createElement('wbr'));
      el.append(whole(piece));
    });
  }
}
/** An inline block: it moves to the next line whole, and breaks inside only if wider than a line. */
function whole(text) {
  const span = document.createElement('span');
  span.className = 'w';
  span.textContent = text;
  return span;
}

/** Adds a row where its time puts it: rows from the servers can arrive after later page rows. */
function row(lane, kind, text, data = {}, at = now()) {
  if (at < clearedAt) return undefined; // a server row from before Clear, arriving late
  const li = document.createElement('li');
  li.dataset.lane = lane;
  li.dataset.kind = kind;
  li.dataset.at = String(at);
  const runOf = runAt(at);
  if (runOf !== undefined) li.dataset.run = String(runOf);
  for (const [key, value] of Object.entries(data)) if (value !== undefined && value !== null) li.dataset[key] = String(value);
  const time = document.createElement('time');
  time.dateTime = new Date(at).toISOString();
  time.textContent = clockText(at);
  const entry = document.createElement('div');
  entry.className = `entry ${tone[kind] ?? ''}`;
  if (lane !== 'run') entry.style.gridColumn = String(laneOrder.indexOf(lane) + 2);
  fill(entry, text);
  li.append(time, entry);
  let before = null;
  for (let node = timeline.lastElementChild; node && Number(node.dataset.at) > at; node = node.previousElementSibling) before = node;
  // The page follows the newest row: a new last row is scrolled into view, and so is the last
  // one when a row arriving late (from a server) lands above it while it was in view.
  const last = timeline.lastElementChild;
  const following = !before || last.getBoundingClientRect().bottom <= innerHeight + 1;
  timeline.insertBefore(li, before);
  if (following) timeline.lastElementChild.scrollIntoView({ block: 'nearest' });
  return li;
}

// The sticky block (status, counters, lane titles) changes height with the width: keep the
// newest row scrolled into view below it, not under it.
new ResizeObserver(([entry]) => {
  document.documentElement.style.scrollPaddingTop = `${Math.ceil(entry.target.getBoundingClientRect().height) + 4}px`;
}).observe($('sticky'));

// ---------------------------------------------------------------- the app: sign in, calls
const config = await (await fetch('/api/config')).json();
let client;
/** The token the client holds, as its `token` events tell: { jti, expiresAt (local ms), at }. */
let held;
/** The provider calls of this client in flight (a refresh ahead runs beside the call that started it). */
const providing = new Set();
/** Resolves once no provider call is in flight and the `token` events of those done have come. */
async function providerSettled() {
  while (providing.size) await Promise.allSettled(providing);
  await sleep(0);
}

const jtiOf = (jwt) => JSON.parse(atob(jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))).jti;
/** Each data call carries `?call=<run>.<i>/<n>` (or `<run>.<i>`), so SDK and service rows can name it. */
const callOf = (url) => new URL(url).searchParams.get('call') ?? undefined;
const callLabel = (id) => (id ? `call ${id.replace(/^\d+\./, '')}` : 'call');
const pathOf = (url) => new URL(url).pathname.replace('/open/api/v1', '');
const reasons = {
  initial: 'first token',
  unauthorized: 'after a 401: forced refresh',
  proactive: 'refresh ahead of expiry',
  expired: 'the held one expired',
  manual: 'getToken({ forceRefresh })',
};
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

function signIn(id) {
  // A new client for the new user; the old one forgets its token.
  if (client) client.clearToken();
  held = undefined;
  let lastJti;
  const jtiOfVersion = new Map();
  const mine = createClient({
    baseUrl: config.sandboxUrl,
    // The tokenProvider contract: return only access_token; on forceRefresh ask the backend to bypass its cache.
    tokenProvider: ({ forceRefresh, rejected }) => {
      count('provider');
      row('sdk', 'provider', `tokenProvider({ forceRefresh: ${forceRefresh} }) → partner backend`, { forced: forceRefresh });
      const asked = (async () => {
        const response = await fetch(`/api/channel-token?user=${encodeURIComponent(id)}${forceRefresh ? '&force=1&rejected=' + (rejected || '') : ''}`);
        const body = await response.json();
        if (!response.ok) throw new Error(body.error ?? `token route answered ${response.status}`);
        lastJti = jtiOf(body.access_token); // only the token's number is shown, never the token
        return body.access_token;
      })();
      providing.add(asked);
      asked.then(
        () => providing.delete(asked),
        () => providing.delete(asked),
      );
      return asked;
    },
  });
  client = mine;
  // Events of a client signed out since are not this session's.
  const on = (name, handler) => mine.on(name, (e) => client === mine && handler(e));
  /** A refresh after a 401 and one ahead of expiry are counted apart (both are forceRefresh: true). */
  const countRefresh = (reason) => (reason === 'unauthorized' ? count('forced') : reason === 'proactive' ? count('ahead') : undefined);
  const ids = ({ url, attempt, requestId }) => ({ call: callOf(url), attempt, requestId });
  on('request', (e) => row('sdk', 'request', `${callLabel(callOf(e.url))} · attempt ${e.attempt}: ${e.method} ${pathOf(e.url)}`, ids(e)));
  on(
    'response',
    (e) =>
      e.status !== 401 &&
      row('sdk', 'response', `${callLabel(callOf(e.url))} · attempt ${e.attempt}: ${e.status} in ${Math.round(e.durationMs)} ms`, {
        ...ids(e),
        status: e.status,
      }),
  );
  on('unauthorized', (e) => {
    count('401');
    row('sdk', 'unauthorized', `${callLabel(callOf(e.url))} · attempt ${e.attempt}: 401 with token #${jtiOfVersion.get(e.tokenVersion) ?? '?'}`, ids(e));
  });
  on('token', ({ reason, version, expiresAt }) => {
    jtiOfVersion.set(version, lastJti);
    held = { jti: lastJti, expiresAt: expiresAt ?? Infinity, at: Date.now(), reason };
    countRefresh(reason);
    const until = expiresAt ? `, expires ${clockText(expiresAt)}` : '';
    row('sdk', 'token', `new token #${lastJti} (${reasons[reason] ?? reason}${until})`, { jti: lastJti, reason });
  });
  on('retry', (e) => {
    if (e.reason === 'unauthorized') count('replay');
    const why = e.reason === 'unauthorized' ? 'replay after the 401' : `${e.reason}${e.status ? ` ${e.status}` : ''}, after ${Math.round(e.delayMs)} ms`;
    row('sdk', 'retry', `${callLabel(callOf(e.url))}: retry as attempt ${e.attempt} (${why})`, { ...ids(e), reason: e.reason });
  });
  on('auth:failed', (e) => {
    count('auth-failed');
    row('sdk', 'auth-failed', `${callLabel(callOf(e.url))}: auth:failed, 401 again after the forced refresh; sign in again`, {
      call: callOf(e.url),
      requestId: e.requestId,
    });
  });
  on('token:error', ({ reason, error }) => {
    countRefresh(reason);
    row('sdk', 'auth-failed', stripPrefix(error.message), { reason });
  });
  $('who').textContent = `signed in as ${id}`;
  row('page', 'signin', `signed in as ${id} (a new client, no token yet)`);
}

/** Call `i` of run `runId` (of `n`, when known): odd ones GET orders, even ones POST a body. */
async function call(runId, i, n) {
  const id = n ? `${runId}.${i}/${n}` : `${runId}.${i}`;
  const label = callLabel(id);
  const post = i % 2 === 0;
  count('calls');
  row('page', 'call', `${label}: ${post ? 'POST echo' : 'GET orders'}`, { call: id });
  try {
    const searchParams = { call: id };
    const data = post
      ? await client.post(config.paths.echo, { json: { call: i, at: Date.now() }, searchParams })
      : await client.get(config.paths.orders, { searchParams });
    count('ok');
    row('page', 'call-ok', `${label} result: ${post ? `echoed ${data.body.length} bytes` : `${data.orders.length} orders`}`, { call: id });
  } catch (error) {
    count('failed');
    row('page', 'call-failed', `${label} failed: ${isChannelError(error) ? `${error.code}: ${stripPrefix(error.message)}` : error}`, { call: id });
  }
}

/** The external user id from the form, or undefined (with the reason shown) when it is not one. */
function userIdFromForm() {
  const value = $('user').value.trim();
  const problem = value === '' ? "enter an external user id (your user's id, 1 to 128 characters)" : [...value].length > 128 ? 'at most 128 characters' : '';
  $('user-error').textContent = problem;
  $('user').setAttribute('aria-invalid', String(!!problem));
  return problem ? undefined : value;
}

/** Flows 2, 3 and 5 sign in with the form's id when nobody is signed in yet. */
function ensureSignedIn() {
  if (client) return;
  const id = userIdFromForm();
  if (!id) throw new Error('enter an external user id first');
  signIn(id);
}

/**
 * Flows 2 and 3 need the client to hold a token that nothing else will replace during the run:
 * one with more than 90 s left (a refresh ahead comes at most 60 s before the end). Without one
 * (just signed in, or after the refresh-ahead flow's short tokens), the client gets one first.
 */
async function ensureFreshToken() {
  const left = held ? held.expiresAt - Date.now() : -Infinity;
  if (left > 90_000) return;
  if (held) {
    row(
      'page',
      'setup',
      `set-up: token #${held.jti} has ${left > 0 ? `${Math.round(left / 1000)} s` : 'no time'} left: getToken({ forceRefresh: true }) for a fresh one`,
    );
    await client.getToken({ forceRefresh: true });
  } else {
    row('page', 'setup', 'set-up: the client holds no token yet: getToken()');
    await client.getToken();
  }
}

const control = async (path) => {
  const response = await fetch(path, { method: 'POST' });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ?? `${path} answered ${response.status}`);
  return body;
};

// ---------------------------------------------------------------- the five flows
function flowSignIn() {
  const id = userIdFromForm();
  if (!id) return;
  return run(1, `sign in as ${id} and call once`, async (r) => {
    signIn(id);
    await call(r.no, 1, 1);
    // A token the backend's cache hands back past half its life is refreshed ahead at this call:
    // a second provider call, counted once it is done.
    await providerSettled();
    const ahead = r.counts.ahead;
    return verdictOf(r.counts, ['calls', 'provider', ...(ahead ? ['ahead'] : []), '401', 'ok'], {
      calls: 1,
      provider: 1 + ahead,
      401: 0,
      ok: 1,
      failed: 0,
    });
  });
}

/**
 * Flow 1 again, with the client signed in: one more call. Past the middle of its token's life
 * (after `channel-sandbox ttl 60`, 30 s on) it goes out with that token and starts a refresh
 * ahead; the claim is the same either way: no 401, no forced refresh.
 */
function flowCallAgain() {
  return run(1, 'call once more with the same client', async (r) => {
    ensureSignedIn();
    await call(r.no, 1, 1);
    await providerSettled();
    const ahead = r.counts.ahead ? ['ahead'] : [];
    return verdictOf(r.counts, ['calls', 'provider', ...ahead, '401', 'ok'], { calls: 1, 401: 0, forced: 0, ok: 1, failed: 0 });
  });
}

function flowBurst() {
  const n = Math.max(2, Math.min(50, Math.floor(Number($('burst-size').value)) || 5));
  $('burst-size').value = String(n);
  return run(2, `expire all tokens, then ${n} calls at once`, async (r) => {
    ensureSignedIn();
    await ensureFreshToken();
    row('page', 'control', 'asked the sandbox to expire every token');
    await control('/api/control/expire');
    row('page', 'burst', `firing ${n} calls at once (even ones POST a body)`);
    await Promise.all(Array.from({ length: n }, (_, i) => call(r.no, i + 1, n)));
    return verdictOf(r.counts, ['calls', '401', 'forced', 'replay', 'ok'], { calls: n, 401: n, forced: 1, ahead: 0, replay: n, ok: n, failed: 0 });
  });
}

function flowFailNext() {
  const k = $('fail-n').value === '1' ? 1 : 2;
  return run(3, `the next ${plural(k, 'call answers', 'calls answer')} 401, then one call`, async (r) => {
    ensureSignedIn();
    await ensureFreshToken();
    row('page', 'control', `asked the sandbox to answer 401 to the next ${plural(k, 'call', 'calls')}`);
    await control(`/api/control/fail-next?n=${k}`);
    await call(r.no, 1, 1);
    return k === 2
      ? verdictOf(r.counts, ['calls', '401', 'forced', 'replay', 'auth-failed', 'failed'], {
          calls: 1,
          401: 2,
          forced: 1,
          replay: 1,
          'auth-failed': 1,
          ok: 0,
          failed: 1,
        })
      : verdictOf(r.counts, ['calls', '401', 'forced', 'replay', 'ok'], { calls: 1, 401: 1, forced: 1, replay: 1, ok: 1, failed: 0 });
  });
}

const pushExpected = {
  signed: { text: 'delivered, HTTP 200', ok: (p) => p.ok && p.status === 200 },
  tampered: { text: 'refused by the backend with HTTP 401', ok: (p) => !p.ok && p.status === 401 },
  fail: { text: 'failed with HTTP 500', ok: (p) => !p.ok && p.status === 500 },
  slow: { text: `failed: timeout after ${config.webhookTimeoutMs} ms`, ok: (p) => !p.ok && p.error === `timeout after ${config.webhookTimeoutMs} ms` },
};
function flowPush(mode) {
  const expected = pushExpected[mode];
  return run(4, `push (${mode}): expect ${expected.text}`, async () => {
    row('page', 'push', `asked the service to push (${mode})`);
    const push = await control(`/api/control/push?mode=${mode}`);
    count(push.ok ? 'push-ok' : 'push-failed');
    const outcome = push.ok ? `delivered, HTTP ${push.status}` : `failed: ${push.error}`;
    const ok = expected.ok(push);
    return { ok, text: `push #${push.id} · ${outcome}${ok ? ' ✓' : ` ✗ (expected ${expected.text})`}` };
  });
}

/** The refresh-ahead flow's pace: 20 calls over a token's life (1 s for 20-s tokens). */
const aheadInterval = Math.max(250, (config.aheadTtl * 1000) / 20);
function flowAhead() {
  const ttl = config.aheadTtl;
  return run(5, `refresh ahead: ${ttl}-s tokens, a call every ${seconds(aheadInterval)}`, async (r) => {
    ensureSignedIn();
    row('page', 'control', `set-up: tokens issued from now on live ${ttl} s`);
    await control(`/api/control/ttl?seconds=${ttl}`);
    try {
      // A token fresh from the service, so its whole life is ahead of it.
      row('page', 'setup', `set-up: getToken({ forceRefresh: true }): a fresh ${ttl}-s token from a forced exchange`);
      await client.getToken({ forceRefresh: true });
      const first = held;
      row(
        'page',
        'ahead',
        `a call every ${seconds(aheadInterval)}: the SDK refreshes ahead at the first call past half the token's life (refreshLeeway, 60 s by default, at most half of ${ttl} s); that call still goes out with token #${first.jti}`,
      );
      const started = Date.now();
      const most = Math.ceil((ttl * 1000) / aheadInterval) + 4;
      let i = 0;
      let after = 0; // calls started once the new token was in
      while (i < most && after < 2) {
        const wait = started + i * aheadInterval - Date.now();
        if (wait > 0) await sleep(wait);
        if (r.counts.ahead > 0) after++;
        await call(r.no, ++i);
      }
      const into =
        held && held !== first && held.reason === 'proactive' ? ` · token #${held.jti} came ${seconds(held.at - first.at)} into #${first.jti}'s ${ttl} s` : '';
      return verdictOf(r.counts, ['calls', '401', 'ahead', 'ok'], { 401: 0, forced: 0, ahead: 1, ok: r.counts.calls, failed: 0 }, into);
    } finally {
      row('page', 'control', `tokens issued from now on live ${config.ttl} s again (the client keeps its ${ttl}-s token until it needs a new one)`);
      await control(`/api/control/ttl?seconds=${config.ttl}`);
    }
  });
}

$('signin-form').onsubmit = (event) => {
  event.preventDefault();
  void flowSignIn();
};
$('again').onclick = () => void flowCallAgain();
$('burst').onclick = () => void flowBurst();
$('fail-next').onclick = () => void flowFailNext();
for (const button of document.querySelectorAll('[data-push]')) button.onclick = () => void flowPush(button.dataset.push);
$('ahead').onclick = () => void flowAhead();
$('ahead').textContent = `${config.aheadTtl}-s tokens, a call every ${seconds(aheadInterval)}`;
$('ahead-note').textContent = `(refresh ahead at the first call after ${config.aheadTtl / 2} s; about ${Math.round(config.aheadTtl / 2 + 3)} s in all)`;
$('clear').onclick = () => {
  clearedAt = now();
  void alignClock();
  timeline.textContent = '';
};

// Server-side lanes (partner backend, service) arrive as server-sent events with their own `at`.
await alignClock();
const events = new EventSource('/api/events');
events.onmessage = (message) => {
  const { lane, kind, text, at, ...data } = JSON.parse(message.data);
  row(lane, kind, text, data, at);
};
events.onopen = () => {
  document.body.dataset.ready = 'true';
  if (!current) setStatus('connected: pick a flow', '');
};
