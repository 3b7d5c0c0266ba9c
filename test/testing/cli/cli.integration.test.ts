/**
 * The `channel-sandbox` CLI as a user runs it: the built dist/sandbox-cli.js in a subprocess,
 * against a sandbox that is itself started by the CLI. Nothing here uses the Node API to
 * drive the sandbox: every QA step of the README's guide is a command.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient, UnauthorizedError } from '../../../src/index.js';
import { createHmac } from 'node:crypto';
import { createMemoryDedupStore, createTokenExchange, createTokenRoute, createWebhookHandler, toNodeHandler } from '../../../src/server-node.js';

const cli = 'dist/sandbox-cli.js';
const children: ChildProcessWithoutNullStreams[] = [];
const servers: Server[] = [];
afterAll(async () => {
  for (const child of children) child.kill('SIGINT');
  await Promise.all(children.map((child) => (child.exitCode === null && child.signalCode === null ? new Promise((r) => child.once('exit', r)) : undefined)));
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
}, 30_000);

/** Runs one command to its end. */
function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, CHANNEL_SANDBOX_URL: '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts a long-running command; `lines` fills as it prints, `waitFor` waits for a line. */
function background(args: string[]) {
  const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, CHANNEL_SANDBOX_URL: '' } });
  children.push(child);
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    const parts = (partial + d).split('\n');
    partial = parts.pop() as string;
    lines.push(...parts);
  });
  child.stderr.on('data', (d) => (stderr += d));
  const waitFor = async (pattern: RegExp, count = 1) => {
    while (lines.filter((l) => pattern.test(l)).length < count) {
      if (child.exitCode !== null) throw new Error(`channel-sandbox ${args.join(' ')} exited ${child.exitCode}: ${stderr}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return lines.filter((l) => pattern.test(l));
  };
  return { child, lines, waitFor };
}

async function server(handler: Parameters<typeof createServer>[1]) {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

describe('channel-sandbox: every QA flow from a terminal', { timeout: 60_000 }, () => {
  let url = '';
  let readyLine: Record<string, unknown> = {};
  let credentials = { accessKey: '', secretKey: '' };
  let log: ReturnType<typeof background>;
  const received: string[] = [];
  let hook = '';
  const sb = (...args: string[]) => run([...args, '--sandbox', url]);

  beforeAll(async () => {
    // The partner's webhook receiver (any stack would do; this one uses the package's handler).
    const node = toNodeHandler(
      createWebhookHandler({ secret: 'whsec_cli', onLogisticsUpdated: (e) => void received.push(e.logistics.order_no), onError: () => {} }),
    );
    hook =
      (await server((req, res) => {
        if (req.url === '/fail') return void (req.resume(), res.writeHead(500).end());
        // A receiver whose database is down: a 500 with a long answer that names the cause.
        if (req.url === '/db-down')
          return void (
            req.resume(),
            res
              .writeHead(500, { 'content-type': 'application/json' })
              .end(JSON.stringify({ error: 'database unavailable: connect ECONNREFUSED 10.0.0.5:5432', detail: 'x'.repeat(500) }, null, 2))
          );
        if (req.url === '/no-check') return void (req.resume(), res.writeHead(200).end('{"ok":true}'));
        node(req, res);
      })) + '/webhooks/channel';
    log = background([
      'start',
      '--port',
      '0',
      '--json',
      '--webhook-secret',
      'whsec_cli',
      '--webhook-url',
      hook,
      '--access-key',
      'ak_cli',
      '--secret-key',
      'sk_cli',
    ]);
    const [ready] = await log.waitFor(/"event":"ready"/);
    const { accessKey, secretKey, ...rest } = JSON.parse(ready) as { url: string; accessKey: string; secretKey: string };
    ({ url } = rest);
    credentials = { accessKey, secretKey };
    readyLine = rest;
  }, 30_000);

  test('start --json: one ready line with the address and credentials, then one JSON line per event', async () => {
    expect(credentials).toEqual({ accessKey: 'ak_cli', secretKey: 'sk_cli' });
    expect(readyLine).toEqual({ event: 'ready', url, tokenTtlSeconds: 900, webhookUrl: hook, signed: true });
    const exchange = createTokenExchange({ baseUrl: url, ...credentials });
    await exchange.getToken('cli-user');
    const [line] = await log.waitFor(/"type":"token"/);
    expect(JSON.parse(line)).toMatchObject({ type: 'token', ok: true, externalUserId: 'cli-user', via: 'endpoint' });
    expect(line).not.toMatch(/eyJ/); // never a token
  });

  test('expire, then fail-next 2: the app sees one forced refresh and replay, then auth:failed (what the demo shows)', async () => {
    const exchange = createTokenExchange({ baseUrl: url, ...credentials });
    const provider: boolean[] = [];
    const client = createClient({
      baseUrl: url,
      tokenProvider: async ({ forceRefresh }) => (provider.push(forceRefresh), (await exchange.getToken('qa-1', { forceRefresh })).accessToken),
    });
    await client.get('/open/api/v1/sdk/orders');
    expect(await sb('expire')).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^expired \d+ tokens?: every token issued so far now gets 401\n$/),
      stderr: '',
    });
    await Promise.all([
      client.get('/open/api/v1/sdk/orders'),
      client.get('/open/api/v1/sdk/orders/SO20240601001'),
      client.post('/open/api/v1/sdk/echo', { json: { n: 1 } }),
    ]);
    expect(provider).toEqual([false, true]);
    expect((await sb('fail-next', '2')).stdout).toBe('the next 2 data calls answer 401\n');
    await expect(client.get('/open/api/v1/sdk/orders')).rejects.toBeInstanceOf(UnauthorizedError);
    const stats = JSON.parse((await sb('stats', '--json')).stdout) as Record<string, number>;
    expect(stats).toMatchObject({ unauthorized: 5, failNext: { count: 0, status: 401 } });
    expect((await sb('stats')).stdout).toMatch(/^token calls {5}\d+ \(issued \d+, refused 0\)\ndata calls {6}\d+ \(401: 5\)\n/);
  });

  test('push: signed accepted, tampered refused, a 500 receiver and an absent one recorded as failed', async () => {
    const signed = await sb('push', '--order', 'SO20240602002');
    expect(signed).toMatchObject({ code: 0, stderr: '' });
    expect(signed.stdout).toMatch(/^push #\d+ SO20240602002 → http:\/\/127\.0\.0\.1:\d+\/webhooks\/channel: delivered, HTTP 200 in \d+ ms\n$/);
    expect(received).toEqual(['SO20240602002']);
    const tampered = await sb('push', '--tamper');
    expect(tampered).toMatchObject({ code: 0, stderr: '' }); // refused, as it should be
    expect(tampered.stdout).toMatch(
      /^push #\d+ SO20240601001 \(tampered after signing\) → \S+: FAILED: HTTP 401 in \d+ ms\n {2}answer: \{"error":"invalid signature"\}\n {2}refused, as it should be: the body was altered after signing\n$/,
    );
    const failing = await sb('push', '--to', hook.replace('/webhooks/channel', '/fail'), '--json');
    expect(failing.code).toBe(1);
    expect(JSON.parse(failing.stdout)).toMatchObject({ ok: false, status: 500, error: 'HTTP 500', via: 'direct' });
    const absent = await sb('push', '--to', 'http://127.0.0.1:1/hook');
    expect([absent.code, absent.stdout]).toEqual([1, expect.stringMatching(/FAILED: connection failed: /)]);
    expect(received).toEqual(['SO20240602002']);
  });

  test("push exits 1 when the delivery fails and prints the receiver's status and trimmed answer; --tamper exits 1 when the receiver accepts", async () => {
    const down = await sb('push', '--to', hook.replace('/webhooks/channel', '/db-down'));
    expect({ code: down.code, stderr: down.stderr }).toEqual({ code: 1, stderr: '' });
    const [first, answer, ...rest] = down.stdout.split('\n');
    expect(first).toMatch(/^push #\d+ SO20240601001 → http:\/\/127\.0\.0\.1:\d+\/db-down: FAILED: HTTP 500 in \d+ ms$/);
    // Whitespace collapsed, cut to 300 characters.
    expect(answer).toMatch(/^ {2}answer: \{ "error": "database unavailable: connect ECONNREFUSED 10\.0\.0\.5:5432", "detail": "x+…$/);
    expect(answer.length).toBe('  answer: '.length + 300);
    expect(rest).toEqual(['']);
    const json = await sb('push', '--to', hook.replace('/webhooks/channel', '/db-down'), '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, status: 500, answer: expect.stringMatching(/^\{ "error": "database unavailable/) });
    const accepted = await sb('push', '--tamper', '--to', hook.replace('/webhooks/channel', '/no-check'));
    expect(accepted.code).toBe(1);
    expect(accepted.stdout).toMatch(
      /\(tampered after signing\) → \S+: delivered, HTTP 200 in \d+ ms\n {2}your receiver accepted a body altered after signing: verify X-Channel-Webhook-Signature over the raw body/,
    );
  });

  test('listen --forward-to: pushes come through the listener, which prints each and the answer; events prints what happened', async () => {
    const events = background(['events', '--json', '--sandbox', url]);
    const listener = background(['listen', '--forward-to', hook, '--sandbox', url]);
    await listener.waitFor(/^Ready: pushes from http:\/\/127\.0\.0\.1:\d+ go to http:\S+\/webhooks\/channel \(signed; the receiver has 8000 ms\)/);
    expect((await sb('push', '--order', 'SO20240601001')).stdout).toMatch(/\(through channel-sandbox listen\): delivered, HTTP 200/);
    expect((await sb('push', '--tamper')).stdout).toMatch(
      /\(through channel-sandbox listen\): FAILED: HTTP 401 in \d+ ms\n {2}answer: \{"error":"invalid signature"\}\n/,
    );
    const printed = await listener.waitFor(/ push #\d+ /, 2);
    expect(printed[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} {2}push #\d+ SO20240601001 \(signed\) → \S+\/webhooks\/channel: HTTP 200 in \d+ ms$/);
    expect(printed[1]).toMatch(
      /push #\d+ SO20240601001 \(signed, tampered after signing\) → \S+: HTTP 401 in \d+ ms, answer: \{"error":"invalid signature"\}$/,
    );
    expect(received.at(-1)).toBe('SO20240601001');
    const outcomes = (await events.waitFor(/"type":"push"/, 2)).map((l) => JSON.parse(l).record);
    expect(outcomes.map((r: { ok: boolean; via: string }) => [r.ok, r.via])).toEqual([
      [true, 'listener'],
      [false, 'listener'],
    ]);
    listener.child.kill('SIGINT');
    await events.waitFor(/"type":"listener","connected":false/);
    events.child.kill('SIGINT');
  });

  test('token and ttl: a token for curl, and shorter lifetimes from now on', async () => {
    const ttl = await sb('ttl', '60');
    expect(ttl.stdout).toBe('tokens issued from now on live 60 s (tokens already issued keep theirs)\n');
    const token = (await sb('token', 'qa-curl')).stdout.trim();
    const response = await fetch(url + '/open/api/v1/sdk/orders/SO20240601001', { headers: { authorization: 'Bearer ' + token } });
    expect(response.status).toBe(200);
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { exp: number; iat: number; sub: string };
    expect([claims.sub, claims.exp - claims.iat]).toEqual(['qa-curl', 60]);
  });

  test('check token-route and check webhook: a correct app passes (exit 0), a broken one fails with what to fix (exit 1), --json', async () => {
    const exchange = createTokenExchange({ baseUrl: url, ...credentials });
    const user = (req: import('node:http').IncomingMessage) => (/session=qa/.test(req.headers.cookie ?? '') ? 'qa-1' : null);
    const route = toNodeHandler(createTokenRoute({ exchange, resolveUser: user }));
    const webhook = toNodeHandler(
      createWebhookHandler({ secret: 'whsec_cli', dedup: createMemoryDedupStore(), onLogisticsUpdated: () => {}, onError: () => {} }),
    );
    const good = await server((req, res) => (req.url?.startsWith('/webhooks') ? webhook(req, res) : route(req, res)));
    const brokenExchange = createTokenExchange({ baseUrl: url, ...credentials }); // its own cache: both apps are checked at once
    // Broken: a token route with no Cache-Control and CORS for any origin; a receiver that checks JSON.stringify(req.body).
    const broken = await server((req, res) => {
      const chunks: Buffer[] = [];
      req
        .on('data', (c: Buffer) => chunks.push(c))
        .on('end', async () => {
          if (req.url?.startsWith('/webhooks')) {
            const expected = createHmac('sha256', 'whsec_cli')
              .update(JSON.stringify(JSON.parse(Buffer.concat(chunks).toString())))
              .digest('hex');
            return void res.writeHead(expected === String(req.headers['x-channel-webhook-signature']).toLowerCase() ? 200 : 401).end();
          }
          if (!user(req)) return void res.writeHead(401).end();
          const { accessToken } = await brokenExchange.getToken('qa-1', {
            forceRefresh: /force=1/.test(req.url ?? '') || /forceRefresh/.test(Buffer.concat(chunks).toString()),
          });
          res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' }).end(JSON.stringify({ access_token: accessToken }));
        });
    });
    const [tokenOk, tokenBad, hookOk, hookBad, json] = await Promise.all([
      sb('check', 'token-route', good + '/channel-token', '--header', 'cookie: session=qa'),
      sb('check', 'token-route', broken + '/channel-token', '--header', 'cookie: session=qa'),
      run(['check', 'webhook', good + '/webhooks/channel', '--secret', 'whsec_cli']),
      run(['check', 'webhook', broken + '/webhooks/channel'], { CHANNEL_WEBHOOK_SECRET: 'whsec_cli' }),
      run(['check', 'webhook', broken + '/webhooks/channel', '--secret', 'whsec_cli', '--json']),
    ]);
    expect([tokenOk.code, tokenOk.stderr]).toEqual([0, '']);
    // Every line passes (the time per call may warn on a machine slow enough to take 2 s).
    expect(
      tokenOk.stdout
        .split('\n')
        .filter((l) => /^[✓✗⚠–] /.test(l) && !l.includes('time per call'))
        .map((l) => l[0]),
    ).toEqual(['✓', '✓', '✓', '✓', '✓', '✓', '✓', '✓', '✓', '✓']);
    expect(tokenOk.stdout).toMatch(
      /^✓ answers a token for the signed-in user: HTTP 200 \{ access_token \} in \d+ ms: a JWT this sandbox issued, for "qa-1" \(token #\d+\)$/m,
    );
    expect(tokenBad.code).toBe(1);
    expect(tokenBad.stdout).toMatch(
      /^✗ Cache-Control: no-store: plain call: no Cache-Control; .*\n {4}fix: send Cache-Control: no-store with every token answer/m,
    );
    expect(tokenBad.stdout).toMatch(/^✗ CORS grants no other origin: Origin: https:\/\/evil\.example → Access-Control-Allow-Origin: \* on GET/m);
    // It drops `rejected` too, and answers another site's request.
    expect(tokenBad.stdout).toMatch(/^✗ a forced call never answers the token it names as rejected: .*answered token #\d+, the very token it named$/m);
    expect(tokenBad.stdout).toMatch(/^⚠ cross-site requests are refused: /m);
    expect(tokenBad.stdout).toMatch(/^11 checks: [67] passed, 3 failed, [12] warnings?/m);
    expect([hookOk.code, hookOk.stdout]).toEqual([0, expect.stringMatching(/\n9 checks: (9 passed, 0 failed|8 passed, 0 failed, 1 warning)\n$/)]);
    expect(hookBad.code).toBe(1);
    expect(hookBad.stdout).toMatch(
      /^✗ the signature is checked over the raw bytes: refused the same JSON with other whitespace signed over its exact bytes \(HTTP 401\), and accepted it signed over the re-serialised JSON/m,
    );
    expect(JSON.parse(json.stdout)).toMatchObject({
      target: 'webhook',
      ok: false,
      counts: { fail: 1 },
      checks: expect.arrayContaining([expect.objectContaining({ id: 'raw-bytes', status: 'fail' })]),
    });
    expect(json.code).toBe(1);
    for (const r of [tokenOk, tokenBad, hookOk, hookBad, json]) expect(r.stdout).not.toMatch(/eyJ|whsec_cli/);
  });

  test('the sandbox it talks to comes from --sandbox, else CHANNEL_SANDBOX_URL', async () => {
    expect((await run(['fail-next', '0'], { CHANNEL_SANDBOX_URL: url })).stdout).toBe('no data call is set to fail: the next ones answer as usual\n');
  });
});

describe('channel-sandbox: one-line errors', { timeout: 60_000 }, () => {
  /** Exit code, stdout and how many lines went to stderr. */
  const shape = (r: { code: number | null; stdout: string; stderr: string }) => ({ code: r.code, stdout: r.stdout, lines: r.stderr.split('\n').length - 1 });

  test('no sandbox at the address, something else at the address', async () => {
    const closed = await server(() => {});
    servers.pop()?.close();
    const [absent, other, notJson] = await Promise.all([
      run(['expire', '--sandbox', closed]),
      server((_req, res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"not here"}')).then((u) =>
        run(['stats', '--sandbox', u]),
      ),
      server((_req, res) => res.end('<html>')).then((u) => run(['push', '--sandbox', u])),
    ]);
    expect(shape(absent)).toEqual({ code: 1, stdout: '', lines: 1 });
    expect(absent.stderr).toMatch(
      /^channel-sandbox: no sandbox at http:\/\/127\.0\.0\.1:\d+ \(connection refused\); start one with `channel-sandbox start`, or pass --sandbox URL or set CHANNEL_SANDBOX_URL\n$/,
    );
    expect(shape(other)).toEqual({ code: 1, stdout: '', lines: 1 });
    expect(other.stderr).toMatch(/answered HTTP 404: is it a channel-sandbox\?/);
    expect(shape(notJson)).toEqual({ code: 1, stdout: '', lines: 1 });
    expect(notJson.stderr).toMatch(/answered HTTP 200 without the sandbox's JSON: is it a channel-sandbox\?/);
    const check = await run(['check', 'token-route', 'http://127.0.0.1:9/channel-token', '--sandbox', closed]);
    expect(shape(check)).toEqual({ code: 1, stdout: '', lines: 1 });
    expect(check.stderr).toMatch(
      /^channel-sandbox: no sandbox at http:\/\/127\.0\.0\.1:\d+ \(connection refused\): start one with channel-sandbox start, point your app's token exchange at it, and pass its URL\n$/,
    );
  });

  test('bad arguments: exit 2 with what to pass instead', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['bogus'], /unknown command "bogus"; the commands are start, expire, fail-next, push, listen, events, stats, token, ttl, check/],
      [['fail-next', 'three'], /fail-next: n must be a whole number from 0 to 1000; got "three"/],
      [['fail-next', '2', '--status', 'x'], /--status must be a whole number/],
      [['push', '--to', 'localhost:3000'], /push: --to must be an http\(s\) URL/],
      [['push', '--ordr', 'SO1'], /push: unknown or incomplete option --ordr \(channel-sandbox push --help\)/],
      [['listen'], /listen: where to\? channel-sandbox listen --forward-to/],
      [['token'], /token: which user\?/],
      [['token', 'x'.repeat(129)], /token: the user id is 129 characters; the service allows at most 128/],
      [['ttl', '0'], /ttl: seconds must be a whole number from 1 to 86400/],
      [['expire', 'now'], /expire: unexpected argument "now"/],
      [['expire', '--sandbox', 'ftp://x'], /--sandbox must be an http\(s\) URL/],
      [['--ttl', '0'], /--ttl must be a positive number of seconds/],
      [['start', '--access-key', 'a'], /pass both --access-key and --secret-key, or neither/],
      [['start', '--control', 'public'], /--control must be loopback, any or off/],
      [['start', '--control-host', 'http://x:1'], /--control-host must be a host name such as sandbox\.ci\.internal/],
      [['check'], /check: what\? channel-sandbox check token-route <url> or channel-sandbox check webhook <url>/],
      [['check', 'tokens', 'http://x/'], /check: what\? .* \(not "tokens"\)/],
      [['check', 'webhook'], /check webhook: which URL\? e\.g\. channel-sandbox check webhook http:\/\/127\.0\.0\.1:3000\/webhooks\/channel/],
      [['check', 'webhook', 'http://127.0.0.1:9/h'], /check webhook: which secret does your receiver verify with\? pass --secret/],
      [['check', 'webhook', 'http://127.0.0.1:9/h', '--secret', 's', '--header', 'a: b'], /check webhook: --header is for check token-route/],
      [
        ['check', 'token-route', 'http://127.0.0.1:9/t', '--header', 'cookie'],
        /--header must be "name: value", e\.g\. --header "cookie: session=abc"; got "cookie"/,
      ],
      [['check', 'token-route', 'http://127.0.0.1:9/t', '--secret', 's'], /check token-route: --secret is for check webhook/],
      [['check', 'token-route', 'localhost:3000/t'], /check token-route: the URL must be an http\(s\) URL/],
      [['check', 'token-route', 'http://x/', '--hedaer', 'a: b'], /check: unknown or incomplete option --hedaer/],
    ];
    const results = await Promise.all(cases.map(([args]) => run(args)));
    results.forEach((result, i) => {
      expect({ args: cases[i][0], ...shape(result) }).toEqual({ args: cases[i][0], code: 2, stdout: '', lines: 1 });
      expect(result.stderr).toMatch(cases[i][1]);
    });
  });

  test('with --json, a refusal is also one JSON object on stdout (a CI step that parses the report finds one)', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['doctor', '--access-key', 'ak_test', '--json'], /pass both|both .*or neither/],
      [['check', 'token-route', 'localhost:3000/t', '--json'], /the URL must be an http\(s\) URL/],
      [['doctor', '--secretkey', 'sk_live_abcdef123456', '--json'], /unknown or incomplete option --secretkey/],
      [['check', 'webhook', 'http://127.0.0.1:9/h', '--json=yes'], /--json/],
    ];
    const results = await Promise.all(cases.map(([args]) => run(args)));
    results.forEach((result, i) => {
      expect({ args: cases[i][0].join(' '), code: result.code }).toEqual({ args: cases[i][0].join(' '), code: 2 });
      const answer = JSON.parse(result.stdout) as { ok: boolean; exit: number; error: string };
      expect(answer).toMatchObject({ ok: false, exit: 2 });
      expect(answer.error).toMatch(cases[i][1]);
      expect(result.stderr).toBe('channel-sandbox: ' + answer.error + '\n');
      expect(result.stdout).not.toContain('abcdef123456');
    });
  });

  test('a refusal from the sandbox is one line too; so is a busy port', async () => {
    const first = background(['--port', '0']);
    const [line] = await first.waitFor(/listening on/);
    const url = /listening on (http:\/\/\S+)/.exec(line)![1];
    const [unknown, busy] = await Promise.all([run(['push', '--order', 'SO1', '--sandbox', url]), run(['start', '--port', url.split(':')[2]])]);
    expect([shape(unknown), shape(busy)]).toEqual([
      { code: 1, stdout: '', lines: 1 },
      { code: 1, stdout: '', lines: 1 },
    ]);
    expect(unknown.stderr).toMatch(/^channel-sandbox: no order SO1; the sandbox has SO20240601001, SO20240602002\n$/);
    expect(busy.stderr).toMatch(
      /^channel-sandbox: port \d+ is in use \(a sandbox already running\? try `channel-sandbox stats`\); pick another with --port, or --port 0 for any free one\n$/,
    );
  });

  test('start --clock-offset: the sandbox keeps its clock that far from this machine (its Date, signature window, tokens) and says so; a bad value exits 2', async () => {
    const behind = background(['start', '--port', '0', '--json', '--clock-offset=-900', '--access-key', 'ak_clock', '--secret-key', 'sk_clock']);
    const ready = JSON.parse((await behind.waitFor(/"event":"ready"/))[0]) as { url: string; clockOffsetSeconds: number };
    expect(ready.clockOffsetSeconds).toBe(-900);
    const date = Date.parse((await fetch(ready.url + '/open/api/v1/sdk/orders')).headers.get('date') ?? '');
    expect(Math.round((Date.now() - date) / 1000)).toBeGreaterThanOrEqual(899);
    expect(Math.round((Date.now() - date) / 1000)).toBeLessThanOrEqual(901);
    // A backend on this machine's clock is outside its ±300 s window.
    await expect(createTokenExchange({ baseUrl: ready.url, accessKey: 'ak_clock', secretKey: 'sk_clock' }).getToken('u-1')).rejects.toThrow(/40102|timestamp/);
    const ahead = background(['start', '--port', '0', '--clock-offset', '120']);
    expect(await ahead.waitFor(/clock:/)).toEqual(["  clock:      120 s ahead of this machine's (--clock-offset)"]);
    for (const value of ['12x', '1.5', '99999999'])
      expect(await run(['start', '--port', '0', '--clock-offset', value])).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/--clock-offset must be whole seconds/),
      });
  });

  test("--help prints the commands; a command's --help its options", async () => {
    const [all, push] = await Promise.all([run(['--help']), run(['push', '--help'])]);
    expect(all.stdout).toContain('channel-sandbox listen --forward-to URL');
    expect(push.stdout).toMatch(/^channel-sandbox push \[--order SO20240601001\] \[--fresh\] \[--tamper\] \[--to URL\]/);
  });
});
