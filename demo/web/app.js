// The demo page. It uses channel-sdk as any app would: imported by package name.
import { createClient, isChannelError } from 'channel-sdk';

const $ = (id) => document.getElementById(id);
const lanes = { page: 1, sdk: 2, backend: 3, service: 4 };
const tone = {
  'data-ok': 'ok', 'call-ok': 'ok', response: 'ok', 'push-ok': 'ok', 'push-accepted': 'ok', 'token-issued': 'ok', exchange: 'ok',
  'data-401': 'bad', unauthorized: 'bad', 'call-failed': 'bad', 'auth-failed': 'bad', 'push-failed': 'bad', 'push-rejected': 'bad', 'push-error': 'bad', 'token-refused': 'bad', 'exchange-failed': 'bad',
  token: 'refresh', 'exchange-forced': 'refresh', provider: 'refresh', retry: 'warn', control: 'warn', 'push-slow': 'warn', 'push-sent': 'warn',
};
const counters = { provider: 0, forced: 0, '401': 0, retry: 0, ok: 0, failed: 0, 'push-ok': 0, 'push-failed': 0 };

function count(name) {
  counters[name]++;
  document.querySelector(`[data-testid="count-${name}"]`).textContent = String(counters[name]);
}

function log(lane, kind, text) {
  const li = document.createElement('li');
  li.dataset.lane = lane;
  li.dataset.kind = kind;
  const time = document.createElement('time');
  const now = new Date();
  time.textContent = now.toTimeString().slice(0, 8) + '.' + String(now.getMilliseconds()).padStart(3, '0');
  const entry = document.createElement('div');
  entry.className = `entry ${tone[kind] ?? ''}`;
  entry.style.gridColumn = String(lanes[lane] + 1);
  entry.textContent = text;
  li.append(time, entry);
  $('timeline').append(li);
  li.scrollIntoView({ block: 'nearest' });
}

const config = await (await fetch('/api/config')).json();
let user = '';
let client;

function connect(userId) {
  user = userId;
  client = createClient({
    baseUrl: config.sandboxUrl,
    // The tokenProvider contract: return only access_token; on forceRefresh ask the backend to bypass its cache.
    tokenProvider: async ({ forceRefresh }) => {
      count('provider');
      if (forceRefresh) count('forced');
      log('sdk', 'provider', `tokenProvider({ forceRefresh: ${forceRefresh} }) → partner backend`);
      const response = await fetch(`/api/channel-token?user=${encodeURIComponent(user)}${forceRefresh ? '&force=1' : ''}`);
      const body = await response.json();
      if (!response.ok) throw new Error(body.error ?? `token route answered ${response.status}`);
      return body.access_token;
    },
  });
  client.on('request', ({ method, url, attempt }) => log('sdk', 'request', `attempt ${attempt}: ${method} ${new URL(url).pathname} with Bearer token`));
  client.on('response', ({ status, attempt, durationMs }) => status !== 401 && log('sdk', 'response', `attempt ${attempt}: ${status} in ${durationMs} ms`));
  client.on('unauthorized', ({ attempt, tokenVersion }) => {
    count('401');
    log('sdk', 'unauthorized', `attempt ${attempt}: 401 with token v${tokenVersion}`);
  });
  client.on('token', ({ reason, version, expiresAt }) =>
    log('sdk', 'token', `new token v${version} (${reason})${expiresAt ? `, expires ${new Date(expiresAt).toTimeString().slice(0, 8)}` : ''}`),
  );
  client.on('retry', ({ reason, attempt, delayMs }) => {
    count('retry');
    log('sdk', 'retry', `retry as attempt ${attempt} (${reason}${delayMs ? `, after ${Math.round(delayMs)} ms` : ''})`);
  });
  client.on('auth:failed', () => log('sdk', 'auth-failed', 'auth:failed: 401 again after the forced refresh; sign in again'));
  client.on('token:error', ({ error }) => log('sdk', 'auth-failed', error.message));
  $('who').textContent = `signed in as ${userId}`;
  log('page', 'signin', `signed in as ${userId}`);
}

async function call(i) {
  const label = i === undefined ? '' : ` #${i}`;
  const post = i !== undefined && i % 2 === 1;
  log('page', 'call', `${post ? 'POST echo' : 'GET orders'}${label}`);
  try {
    const data = post ? await client.post(config.paths.echo, { json: { call: i, at: Date.now() } }) : await client.get(config.paths.orders);
    count('ok');
    log('page', 'call-ok', `result${label}: ${post ? `echoed ${data.body.length} bytes` : `${data.orders.length} orders`}`);
  } catch (error) {
    count('failed');
    log('page', 'call-failed', `failed${label}: ${isChannelError(error) ? `${error.code}: ${error.message.replace('[channel-sdk] ', '')}` : error}`);
  }
}

const ensureSignedIn = () => {
  if (!client) connect($('user').value.trim() || 'demo-user-1');
};
const control = (path) => fetch(path, { method: 'POST' }).then((r) => r.json());

$('signin').onclick = () => connect($('user').value.trim());
$('call').onclick = () => (ensureSignedIn(), call());
$('burst').onclick = async () => {
  ensureSignedIn();
  const n = Math.max(2, Math.min(50, Number($('burst-size').value) || 5));
  log('page', 'burst', `firing ${n} calls at once (odd ones POST a body)`);
  await Promise.all(Array.from({ length: n }, (_, i) => call(i)));
  $('status').textContent = `burst of ${n} done`;
};
$('expire').onclick = () => control('/api/control/expire').then(() => log('page', 'control', 'asked the sandbox to expire every token'));
$('fail-next').onclick = () => control(`/api/control/fail-next?n=${Number($('fail-n').value) || 1}`).then((r) => log('page', 'control', `asked the sandbox to answer 401 to the next ${r.n} calls`));
for (const button of document.querySelectorAll('[data-push]')) {
  button.onclick = async () => {
    log('page', 'push', `asked the service to push (${button.dataset.push})`);
    const result = await control(`/api/control/push?mode=${button.dataset.push}`);
    count(result.ok ? 'push-ok' : 'push-failed');
    $('status').textContent = `push ${result.ok ? 'delivered' : `failed: ${result.error}`}`;
  };
}
$('clear').onclick = () => {
  $('timeline').textContent = '';
  for (const name of Object.keys(counters)) {
    counters[name] = 0;
    document.querySelector(`[data-testid="count-${name}"]`).textContent = '0';
  }
};

// Server-side lanes (partner backend, service) arrive as server-sent events.
const events = new EventSource('/api/events');
events.onmessage = (message) => {
  const { lane, kind, text } = JSON.parse(message.data);
  log(lane, kind, text);
};
events.onopen = () => {
  document.body.dataset.ready = 'true';
  $('status').textContent = 'connected';
};
