// The demo page. It uses channel-sdk as any app would: imported by package name.
import { createClient, isChannelError } from 'channel-sdk';

const $ = (id) => document.getElementById(id);
const laneOrder = ['page', 'sdk', 'backend', 'service'];
const tone = {
  'data-ok': 'ok', 'call-ok': 'ok', response: 'ok', 'push-ok': 'ok', 'push-accepted': 'ok', 'push-answer': 'ok', 'token-issued': 'ok', exchange: 'ok', 'exchange-cached': 'ok',
  'data-401': 'bad', 'data-error': 'bad', unauthorized: 'bad', 'call-failed': 'bad', 'auth-failed': 'bad', 'push-failed': 'bad', 'push-rejected': 'bad', 'push-error': 'bad', 'push-answer-bad': 'bad', 'token-refused': 'bad', 'exchange-failed': 'bad',
  token: 'refresh', 'exchange-forced': 'refresh', provider: 'refresh', retry: 'warn', control: 'warn', 'push-slow': 'warn', 'push-sent': 'warn',
};
const counters = { provider: 0, forced: 0, '401': 0, retry: 0, ok: 0, failed: 0, 'push-ok': 0, 'push-failed': 0 };
const timeline = $('timeline');
const stripPrefix = (message) => message.replaceAll('[channel-sdk] ', '');

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
    `Rows are ordered by when they happened. The servers stamp theirs; page and SDK rows use this page's clock, ` +
    (offset ? `shifted by ${ms(offset)} to the servers' (measured ±${bound.toFixed(2)} ms).` : `the same as the servers' (measured offset ${ms(best.offset)}, within ±${bound.toFixed(2)} ms of zero).`);
}
const now = () => hr() + offset;

// ---------------------------------------------------------------- the timeline
let clearedAt = 0;

function count(name) {
  counters[name]++;
  document.querySelector(`[data-testid="count-${name}"]`).textContent = String(counters[name]);
}

function clockText(at) {
  const date = new Date(at);
  const hm = document.createElement('span');
  hm.className = 'hm';
  hm.textContent = date.toTimeString().slice(0, 6);
  return [hm, date.toTimeString().slice(6, 8) + '.' + String(date.getMilliseconds()).padStart(3, '0')];
}

/** Adds a row where its time puts it: rows from the servers can arrive after later page rows. */
function row(lane, kind, text, data = {}, at = now()) {
  if (at < clearedAt) return; // a server row from before Clear, arriving late
  const li = document.createElement('li');
  li.dataset.lane = lane;
  li.dataset.kind = kind;
  li.dataset.at = String(at);
  for (const [key, value] of Object.entries(data)) if (value !== undefined && value !== null) li.dataset[key] = String(value);
  const time = document.createElement('time');
  time.dateTime = new Date(at).toISOString();
  time.append(...clockText(at));
  const entry = document.createElement('div');
  entry.className = `entry ${tone[kind] ?? ''}`;
  entry.style.gridColumn = String(laneOrder.indexOf(lane) + 2);
  entry.textContent = text;
  li.append(time, entry);
  let before = null;
  for (let node = timeline.lastElementChild; node && Number(node.dataset.at) > at; node = node.previousElementSibling) before = node;
  timeline.insertBefore(li, before);
  if (!before) li.scrollIntoView({ block: 'nearest' });
}

// ---------------------------------------------------------------- the app: sign in, calls
const config = await (await fetch('/api/config')).json();
let user = '';
let client;
let burstNo = 0;

const jtiOf = (jwt) => JSON.parse(atob(jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))).jti;
/** Each data call carries `?call=<burst>.<i>/<n>`, so SDK and service rows can name it. */
const callOf = (url) => new URL(url).searchParams.get('call') ?? undefined;
const callLabel = (id) => (id ? `call ${id.replace(/^\d+\./, '')}` : 'call');
const pathOf = (url) => new URL(url).pathname.replace('/open/api/v1', '');
const reasons = { initial: 'first token', unauthorized: 'after a 401: forced refresh', proactive: 'refresh ahead of expiry', expired: 'the held one expired', manual: 'getToken({ forceRefresh })' };

function connect(id) {
  user = id;
  let lastJti;
  const jtiOfVersion = new Map();
  client = createClient({
    baseUrl: config.sandboxUrl,
    // The tokenProvider contract: return only access_token; on forceRefresh ask the backend to bypass its cache.
    tokenProvider: async ({ forceRefresh }) => {
      count('provider');
      if (forceRefresh) count('forced');
      row('sdk', 'provider', `tokenProvider({ forceRefresh: ${forceRefresh} }) → partner backend`, { forced: forceRefresh });
      const response = await fetch(`/api/channel-token?user=${encodeURIComponent(user)}${forceRefresh ? '&force=1' : ''}`);
      const body = await response.json();
      if (!response.ok) throw new Error(body.error ?? `token route answered ${response.status}`);
      lastJti = jtiOf(body.access_token); // only the token's number is shown, never the token
      return body.access_token;
    },
  });
  const ids = ({ url, attempt, requestId }) => ({ call: callOf(url), attempt, requestId });
  client.on('request', (e) => row('sdk', 'request', `${callLabel(callOf(e.url))} · attempt ${e.attempt}: ${e.method} ${pathOf(e.url)}`, ids(e)));
  client.on('response', (e) => e.status !== 401 && row('sdk', 'response', `${callLabel(callOf(e.url))} · attempt ${e.attempt}: ${e.status} in ${Math.round(e.durationMs)} ms`, { ...ids(e), status: e.status }));
  client.on('unauthorized', (e) => {
    count('401');
    row('sdk', 'unauthorized', `${callLabel(callOf(e.url))} · attempt ${e.attempt}: 401 with token #${jtiOfVersion.get(e.tokenVersion) ?? '?'}`, ids(e));
  });
  client.on('token', ({ reason, version, expiresAt }) => {
    jtiOfVersion.set(version, lastJti);
    const until = expiresAt ? `, expires ${new Date(expiresAt).toTimeString().slice(0, 8)}` : '';
    row('sdk', 'token', `new token #${lastJti} (${reasons[reason] ?? reason}${until})`, { jti: lastJti, reason });
  });
  client.on('retry', (e) => {
    count('retry');
    const why = e.reason === 'unauthorized' ? 'replay after the 401' : `${e.reason}${e.status ? ` ${e.status}` : ''}, after ${Math.round(e.delayMs)} ms`;
    row('sdk', 'retry', `${callLabel(callOf(e.url))}: retry as attempt ${e.attempt} (${why})`, { ...ids(e), reason: e.reason });
  });
  client.on('auth:failed', (e) => row('sdk', 'auth-failed', `${callLabel(callOf(e.url))}: auth:failed, 401 again after the forced refresh; sign in again`, { call: callOf(e.url), requestId: e.requestId }));
  client.on('token:error', ({ error }) => row('sdk', 'auth-failed', stripPrefix(error.message)));
  $('who').textContent = `signed in as ${id}`;
  row('page', 'signin', `signed in as ${id}`);
}

async function call(burst, i, n) {
  const id = `${burst}.${i}/${n}`;
  const label = callLabel(id);
  const post = i % 2 === 0;
  row('page', 'call', `${label}: ${post ? 'POST echo' : 'GET orders'}`, { call: id });
  try {
    const searchParams = { call: id };
    const data = post ? await client.post(config.paths.echo, { json: { call: i, at: Date.now() }, searchParams }) : await client.get(config.paths.orders, { searchParams });
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
  const problem = value === '' ? 'enter an external user id (your user\'s id, 1 to 128 characters)' : [...value].length > 128 ? 'at most 128 characters' : '';
  $('user-error').textContent = problem;
  $('user').setAttribute('aria-invalid', String(!!problem));
  return problem ? undefined : value;
}

async function signIn() {
  const id = userIdFromForm();
  if (!id) return false;
  const seconds = Number($('ttl').value);
  await control(`/api/control/ttl?seconds=${seconds}`);
  connect(id);
  return true;
}
const ensureSignedIn = async () => !!client || signIn();
const control = (path) => fetch(path, { method: 'POST' }).then((r) => r.json());

$('signin-form').onsubmit = (event) => {
  event.preventDefault();
  void signIn();
};
$('call').onclick = async () => {
  if (await ensureSignedIn()) await call(++burstNo, 1, 1);
};
$('burst').onclick = async () => {
  if (!(await ensureSignedIn())) return;
  const n = Math.max(2, Math.min(50, Number($('burst-size').value) || 5));
  const burst = ++burstNo;
  row('page', 'burst', `firing ${n} calls at once (even ones POST a body)`);
  $('status').textContent = `burst of ${n} in flight…`;
  await Promise.all(Array.from({ length: n }, (_, i) => call(burst, i + 1, n)));
  $('status').textContent = `burst of ${n} done`;
};
$('expire').onclick = () => {
  row('page', 'control', 'asked the sandbox to expire every token');
  return control('/api/control/expire');
};
$('fail-next').onclick = () => {
  const n = Math.max(1, Math.min(50, Number($('fail-n').value) || 1));
  row('page', 'control', `asked the sandbox to answer 401 to the next ${n} calls`);
  return control(`/api/control/fail-next?n=${n}`);
};
const pushButtons = [...document.querySelectorAll('[data-push]')];
for (const button of pushButtons) {
  button.onclick = async () => {
    // One push at a time, with a busy state: a slow receiver keeps it in flight up to the service's window.
    for (const b of pushButtons) b.disabled = true;
    $('push-busy').hidden = false;
    $('push-busy').textContent = `push in flight… (the service waits up to ${config.webhookTimeoutMs / 1000} s)`;
    $('push-controls').setAttribute('aria-busy', 'true');
    row('page', 'push', `asked the service to push (${button.dataset.push})`);
    try {
      const result = await control(`/api/control/push?mode=${button.dataset.push}`);
      count(result.ok ? 'push-ok' : 'push-failed');
      $('status').textContent = `push #${result.id} ${result.ok ? 'delivered' : `failed: ${result.error}`}`;
    } finally {
      for (const b of pushButtons) b.disabled = false;
      $('push-busy').hidden = true;
      $('push-controls').removeAttribute('aria-busy');
    }
  };
}
$('clear').onclick = () => {
  clearedAt = now();
  void alignClock();
  timeline.textContent = '';
  $('status').textContent = '';
  for (const name of Object.keys(counters)) {
    counters[name] = 0;
    document.querySelector(`[data-testid="count-${name}"]`).textContent = '0';
  }
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
  $('status').textContent = 'connected';
};
