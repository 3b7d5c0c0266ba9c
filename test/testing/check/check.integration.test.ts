/**
 * `checkTokenRoute` and `checkWebhook` (what `channel-sandbox check` runs) against a correct
 * partner app built on the package's helpers, and against deliberately broken token routes and
 * webhook receivers written the way partners write them by hand: each mistake must be caught
 * by the right line with the right fix, and nothing else may fail. Real node:http servers on
 * 127.0.0.1:0; the framework recipes are checked in test/server/http/frameworks.integration.test.ts and
 * test/frameworks/next.test.ts.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from 'vitest';
import { createMemoryDedupStore, createTokenExchange, createTokenRoute, createWebhookHandler, toNodeHandler } from '../../../src/server-node.js';
import { checkTokenRoute, checkWebhook, formatCheckReport, type CheckReport, type Sandbox } from '../../../src/testing.js';
import { closers, sandboxWith } from '../helpers.js';

const secret = 'whsec_check';

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An address where nothing listens. */
async function closedUrl(): Promise<string> {
  const url = await serve(() => {});
  await closers.pop()?.();
  return url;
}

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => resolve(Buffer.concat(chunks)));
  });

/** Each check's status by id, and the lines of the ones that did not pass. */
const statuses = (report: CheckReport) => Object.fromEntries(report.checks.map((c) => [c.id, c.status]));
const line = (report: CheckReport, id: string) => report.checks.find((c) => c.id === id) as { status: string; detail: string; fix?: string };

const signedIn = (req: IncomingMessage) => (/(?:^|;\s*)session=demo(?:;|$)/.test(req.headers.cookie ?? '') ? 'user-1' : null);
const credentials = { cookie: 'session=demo' };

/** A token route written by hand: which user, whether to force, which headers; JSON answer. */
function handRoute(
  sandbox: Sandbox,
  o: {
    user?: (req: IncomingMessage) => string | null;
    force?: (req: IncomingMessage, body: string) => boolean;
    headers?: (req: IncomingMessage) => Record<string, string>;
    answer?: (token: string) => unknown;
    forceRefreshWindow?: number;
    /** Drop the `rejected` the client names (a route that passes only forceRefresh on). */
    dropRejected?: boolean;
  } = {},
) {
  const exchange = createTokenExchange({
    baseUrl: sandbox.url,
    ...sandbox.credentials,
    ...(o.forceRefreshWindow === undefined ? {} : { forceRefreshWindow: o.forceRefreshWindow }),
  });
  return async (req: IncomingMessage, res: ServerResponse) => {
    const body = (await readBody(req)).toString();
    const headers = { 'content-type': 'application/json', ...(o.headers ? o.headers(req) : { 'cache-control': 'no-store' }) };
    if (req.method === 'OPTIONS') return void res.writeHead(204, headers).end();
    const user = (o.user ?? signedIn)(req);
    if (!user) return void res.writeHead(401, headers).end('{"error":"not signed in"}');
    const forceRefresh = (o.force ?? ((r, b) => /force=1/.test(r.url ?? '') || /"forceRefresh":true/.test(b)))(req, body);
    const rejected = o.dropRejected ? undefined : (/[?&]rejected=(\w+)/.exec(req.url ?? '')?.[1] ?? /"rejected":"(\w+)"/.exec(body)?.[1]);
    const { accessToken } = await exchange.getToken(user, rejected ? { forceRefresh, rejected } : { forceRefresh });
    res.writeHead(200, headers).end(JSON.stringify(o.answer ? o.answer(accessToken) : { access_token: accessToken, token_type: 'Bearer', expires_in: 900 }));
  };
}

describe('checkTokenRoute', { timeout: 60_000 }, () => {
  test('a route built on createTokenRoute passes every check, from the Sandbox object and from its URL', async () => {
    const sandbox = await sandboxWith();
    const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
    const app = await serve(toNodeHandler(createTokenRoute({ exchange, resolveUser: signedIn })));
    for (const target of [sandbox, sandbox.url]) {
      const report = await checkTokenRoute({ url: app, sandbox: target, headers: credentials });
      // The report never holds a token (every sandbox JWT starts with eyJ).
      expect(JSON.stringify(report) + formatCheckReport(report)).not.toMatch(/eyJ/);
      // The time per call may warn (never fail) on a machine slow enough to take 2 s.
      expect(statuses(report)).toEqual({
        token: 'pass',
        shape: 'pass',
        cache: 'pass',
        'force-query': 'pass',
        'force-post': 'pass',
        rejected: 'pass',
        'no-store': 'pass',
        credentials: 'pass',
        cors: 'pass',
        'cross-site': 'pass',
        timing: expect.stringMatching(/^(pass|warn)$/),
      });
      expect(report.ok).toBe(true);
      expect(line(report, 'token').detail).toMatch(/^HTTP 200 \{ access_token \} in \d+ ms: a JWT this sandbox issued, for "user-1" \(token #\d+\)$/);
      // createTokenRoute shares a forced refresh for forceRefreshWindow (5 s): the check polls past it.
      expect(line(report, 'force-query').detail).toMatch(
        /^token #(\d+) \(the cached one was #\d+\) in \d+ ms( \(the first \d+ answers within [\d.]+ s repeated token #\d+: a forced refresh shared for a moment is fine\))?$/,
      );
    }
  });

  test('a credential a route echoes in a header a line quotes (Cache-Control) is masked as in an answer', async () => {
    const sandbox = await sandboxWith();
    const cookie = 'session=demo; sid=s3ss/9d+8c7b-6a5f';
    const app = await serve(
      handRoute(sandbox, {
        user: () => 'user-1',
        headers: (req) => ({ 'cache-control': `private, x-for=${encodeURIComponent(/sid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1] ?? '')}` }),
      }),
    );
    const report = await checkTokenRoute({ url: app, sandbox, headers: { cookie }, forceWindowMs: 1000 });
    // Before: "… private, x-for=s3ss%2F9d%2B8c7b-6a5f" in the no-store line's detail.
    expect(line(report, 'no-store')).toMatchObject({ status: 'fail', detail: expect.stringContaining('private, x-for=[secret]') });
    expect(formatCheckReport(report)).not.toContain('8c7b');
  });

  test('a route that ignores force (both forms) is caught on both lines, with the fix', async () => {
    const sandbox = await sandboxWith();
    const app = await serve(handRoute(sandbox, { force: () => false }));
    const report = await checkTokenRoute({ url: app, sandbox, headers: credentials, forceWindowMs: 1000 });
    expect(statuses(report)).toMatchObject({
      token: 'pass',
      'force-query': 'fail',
      'force-post': 'fail',
      'no-store': 'pass',
      credentials: 'pass',
      cors: 'pass',
    });
    expect(line(report, 'force-query')).toMatchObject({
      detail: expect.stringMatching(/^answered the cached token #1 again \(3 forced calls over 1\.\d s\)$/),
      fix: expect.stringContaining('exchange.getToken(user, { forceRefresh: true })'),
    });
    expect(line(report, 'force-post').fix).toMatch(/^read forceRefresh from the JSON body/);
    expect(report.ok).toBe(false);
  });

  test('a route that honours ?force=1 but not the POSTed {"forceRefresh":true}: only the POST line fails', async () => {
    const sandbox = await sandboxWith();
    const app = await serve(handRoute(sandbox, { force: (req) => /force=1/.test(req.url ?? '') }));
    const report = await checkTokenRoute({ url: app, sandbox, headers: credentials, forceWindowMs: 1000 });
    expect(statuses(report)).toMatchObject({ 'force-query': 'pass', 'force-post': 'fail' });
    expect(report.counts.fail).toBe(1);
  });

  test('a route that shares a forced refresh for 1.5 s (as concurrent forced callers should) passes', async () => {
    const sandbox = await sandboxWith();
    const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
    let lastForced: { token: string; at: number } | undefined;
    const app = await serve(async (req, res) => {
      const body = (await readBody(req)).toString();
      if (!signedIn(req)) return void res.writeHead(401).end();
      const force = /force=1/.test(req.url ?? '') || /"forceRefresh":true/.test(body);
      let token: string;
      if (force && lastForced && Date.now() - lastForced.at < 1500) token = lastForced.token;
      else {
        token = (await exchange.getToken('user-1', { forceRefresh: force })).accessToken;
        if (force) lastForced = { token, at: Date.now() };
      }
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify({ access_token: token }));
    });
    const report = await checkTokenRoute({ url: app, sandbox, headers: credentials });
    expect(statuses(report)).toMatchObject({ 'force-query': 'pass', 'force-post': 'pass' });
    expect(line(report, 'force-post').detail).toMatch(
      /\(the first \d answers? within [\d.]+ s repeated token #2: a forced refresh shared for a moment is fine\)$/,
    );
  });

  test('no Cache-Control: no-store is caught, naming the answers without it', async () => {
    const sandbox = await sandboxWith();
    const app = await serve(handRoute(sandbox, { headers: () => ({ 'cache-control': 'private, max-age=60' }) }));
    const report = await checkTokenRoute({ url: app, sandbox, headers: credentials });
    expect(line(report, 'no-store')).toMatchObject({
      status: 'fail',
      detail:
        'plain call: private, max-age=60; ?force=1: private, max-age=60; POST {"forceRefresh":true}: private, max-age=60; ?force=1&rejected: private, max-age=60',
    });
    expect(report.counts.fail).toBe(1);
  });

  test('CORS that grants any origin is caught: a reflected origin with credentials, and *', async () => {
    const sandbox = await sandboxWith();
    const reflect = await serve(
      handRoute(sandbox, {
        headers: (req) => ({
          'cache-control': 'no-store',
          'access-control-allow-origin': req.headers.origin ?? '',
          'access-control-allow-credentials': 'true',
        }),
      }),
    );
    const star = await serve(handRoute(sandbox, { headers: () => ({ 'cache-control': 'no-store', 'access-control-allow-origin': '*' }) }));
    const [reflected, any] = await Promise.all([
      checkTokenRoute({ url: reflect, sandbox, headers: credentials }),
      checkTokenRoute({ url: star, sandbox, headers: credentials }),
    ]);
    expect(line(reflected, 'cors')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining(
        'Origin: https://evil.example → Access-Control-Allow-Origin: https://evil.example with Access-Control-Allow-Credentials: true on GET',
      ),
    });
    expect(line(reflected, 'cors').detail).toContain('Origin: null → Access-Control-Allow-Origin: null');
    expect(line(any, 'cors')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('Access-Control-Allow-Origin: * on a preflight'),
      fix: expect.stringMatching(/^allow only your front end's own origin/),
    });
    expect([reflected.counts.fail, any.counts.fail]).toEqual([1, 1]);
  });

  test("a token without the user's credentials is caught; so is a route that needs none at all", async () => {
    const sandbox = await sandboxWith();
    const app = await serve(handRoute(sandbox, { user: () => 'user-1' }));
    const withHeader = await checkTokenRoute({ url: app, sandbox, headers: credentials });
    expect(line(withHeader, 'credentials')).toMatchObject({
      status: 'fail',
      detail: 'without cookie: plain: HTTP 200 with a token, ?force=1: HTTP 200 with a token',
    });
    const without = await checkTokenRoute({ url: app, sandbox });
    expect(line(without, 'credentials')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/^answered a token to a request with no credentials at all/),
    });
    expect([withHeader.counts.fail, without.counts.fail]).toEqual([1, 1]);
  });

  test('signed out, no token in the answer, "Bearer …", a token from another sandbox: the token line fails with the fix, the rest is skipped', async () => {
    const sandbox = await sandboxWith();
    const other = await sandboxWith();
    const cases: Array<[string, Parameters<typeof handRoute>[1], RegExp, RegExp]> = [
      ['signed out', { user: () => null }, /^HTTP 401 \{"error":"not signed in"\} with cookie$/, /^pass the credentials your front end sends/],
      [
        'no token',
        { answer: () => ({ ok: true }) },
        /no token in it \(not \{ access_token \} nor \{ code: 0, data: \{ access_token \} \}\)$/,
        /^answer \{ access_token: token \}/,
      ],
      ['Bearer', { answer: (token) => ({ access_token: 'Bearer ' + token }) }, /^access_token starts with "Bearer "$/, /the SDK adds "Bearer "/],
    ];
    for (const [, options, detail, fix] of cases) {
      const report = await checkTokenRoute({ url: await serve(handRoute(sandbox, options)), sandbox, headers: credentials });
      expect(line(report, 'token')).toMatchObject({ status: 'fail', detail: expect.stringMatching(detail), fix: expect.stringMatching(fix) });
      expect(report.counts).toMatchObject({ fail: 1, skip: 8 });
      expect(JSON.stringify(report)).not.toMatch(/eyJ/);
    }
    const foreign = await checkTokenRoute({ url: await serve(handRoute(other)), sandbox, headers: credentials });
    expect(line(foreign, 'token')).toMatchObject({
      status: 'fail',
      detail: 'the access_token is not a token this sandbox issued (signature invalid (tampered or foreign token))',
      fix: `point your app's token exchange at the sandbox: baseUrl ${sandbox.url} with the access and secret keys it printed`,
    });
  });

  test("the answer's shape is named: { token } and the bare token fail, the whole envelope warns; every other line is still checked", async () => {
    const sandbox = await sandboxWith();
    const shapes: Array<[Parameters<typeof handRoute>[1], string, RegExp]> = [
      [
        { answer: (token) => ({ token }) },
        'fail',
        /^\{ token \}: the JWT is in "token", not in "access_token": a tokenProvider that returns \(await response\.json\(\)\)\.access_token/,
      ],
      [{ answer: (token) => ({ result: { jwt: token } }) }, 'fail', /^\{ result: \{ jwt \} \}: the JWT is in "result\.jwt"/],
      // res.json(token): JSON, a string; named as such, not "as text, not JSON".
      [{ answer: (token) => token }, 'fail', /^the bare token as a JSON string, not an object \(Content-Type: application\/json\)/],
      [
        { answer: (token) => ({ code: 0, data: { access_token: token, expires_in: 900 } }) },
        'warn',
        /^the service's whole envelope \{ code: 0, data: \{ access_token \} \}/,
      ],
    ];
    for (const [options, status, detail] of shapes) {
      const report = await checkTokenRoute({ url: await serve(handRoute(sandbox, options)), sandbox, headers: credentials, forceWindowMs: 6000 });
      expect(line(report, 'shape')).toMatchObject({
        status,
        detail: expect.stringMatching(detail),
        fix: expect.stringMatching(/^answer (JSON )?\{ access_token/),
      });
      // The token itself is found and checked: only the shape line (and another site's request, which handRoute answers) is not ✓.
      expect(report.checks.filter((c) => c.status !== 'pass').map((c) => c.id)).toEqual(['shape', 'cross-site']);
      expect(JSON.stringify(report)).not.toMatch(/eyJ/);
    }
  });

  test('a route that passes forceRefresh on but drops `rejected` answers the rejected token: the rejected line fails, with the fix', async () => {
    const sandbox = await sandboxWith();
    const [dropping, passing] = await Promise.all([serve(handRoute(sandbox, { dropRejected: true })), serve(handRoute(sandbox))]);
    const [dropped, passed] = await Promise.all([
      checkTokenRoute({ url: dropping, sandbox, headers: credentials }),
      checkTokenRoute({ url: passing, sandbox, headers: credentials }),
    ]);
    expect(line(dropped, 'rejected')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(
        /^\?force=1&rejected=<token #(\d+)'s fingerprint>, as the client asks after a 401: answered token #\1, the very token it named$/,
      ),
      fix: expect.stringContaining('exchange.getToken(user, { forceRefresh: true, rejected })'),
    });
    expect(dropped.counts.fail).toBe(1);
    expect(line(passed, 'rejected')).toMatchObject({ status: 'pass', detail: expect.stringMatching(/: token #(\d+), not #(?!\1)\d+$/) });
  });

  test("another site's request: refused (createTokenRoute) passes; answered with a token warns; credentials that are headers pass", async () => {
    const sandbox = await sandboxWith();
    const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
    const [refusing, answering, byHeader] = await Promise.all([
      serve(toNodeHandler(createTokenRoute({ exchange, resolveUser: signedIn }))),
      serve(handRoute(sandbox)),
      serve(handRoute(sandbox, { user: (req) => (req.headers['x-session'] === 'demo' ? 'user-1' : null) })),
    ]);
    const [refused, answered, headers] = await Promise.all([
      checkTokenRoute({ url: refusing, sandbox, headers: credentials }),
      checkTokenRoute({ url: answering, sandbox, headers: credentials }),
      checkTokenRoute({ url: byHeader, sandbox, headers: { 'x-session': 'demo' } }),
    ]);
    expect(line(refused, 'cross-site')).toMatchObject({
      status: 'pass',
      detail: expect.stringMatching(/Sec-Fetch-Site: cross-site, Origin: https:\/\/evil\.example\): HTTP 403$/),
    });
    expect(line(answered, 'cross-site')).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/got HTTP 200 with a token: that site cannot read it/),
      fix: expect.stringMatching(/^refuse requests with Sec-Fetch-Site: cross-site \(createTokenRoute answers 403/),
    });
    expect(answered.ok).toBe(true);
    expect(line(headers, 'cross-site').detail).toMatch(/^the credentials are x-session: headers another site's page cannot send/);
  });

  test('a route without a cache is a warning; a cached token that `expire` ended is a warning the forced calls must answer', async () => {
    const sandbox = await sandboxWith();
    // Every call forced, with no forced-refresh window (which would hand the same token out for 5 s: a cache).
    const app = await serve(handRoute(sandbox, { force: () => true, forceRefreshWindow: 0 }));
    const report = await checkTokenRoute({ url: app, sandbox, headers: credentials });
    expect(line(report, 'cache')).toMatchObject({
      status: 'warn',
      detail: 'each call got a new token (#1, then #2): nothing caches, so every page load asks the service',
    });
    expect(report.ok).toBe(true);
    const cached = await serve(
      toNodeHandler(createTokenRoute({ exchange: createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials }), resolveUser: signedIn })),
    );
    await fetch(cached, { headers: credentials });
    sandbox.expireTokens();
    const after = await checkTokenRoute({ url: cached, sandbox, headers: credentials });
    expect(statuses(after)).toMatchObject({ token: 'warn', 'force-query': 'pass', 'force-post': 'pass' });
  });

  test('no app at the URL: one failure, the rest skipped; no sandbox at its URL and bad options: ConfigError saying what to pass', async () => {
    const sandbox = await sandboxWith();
    const nowhere = await closedUrl();
    const report = await checkTokenRoute({ url: nowhere + '/channel-token', sandbox });
    expect(line(report, 'token')).toMatchObject({ status: 'fail', detail: 'connection refused (is your app running on that port?)' });
    expect(report.counts).toEqual({ pass: 0, fail: 1, warn: 0, skip: 8 });
    await expect(checkTokenRoute({ url: 'http://127.0.0.1:1/x', sandbox: nowhere })).rejects.toThrow(
      `[channel-sdk] no sandbox at ${nowhere} (connection refused): start one with channel-sandbox start`,
    );
    await expect(checkTokenRoute({ url: 'http://127.0.0.1:1/x', sandbox, header: {} } as never)).rejects.toThrow(
      'unknown checkTokenRoute option "header"; did you mean "headers"?',
    );
    await expect(checkTokenRoute({ url: '/channel-token', sandbox })).rejects.toThrow(/url must be an http\(s\) URL/);
    await expect(checkTokenRoute({ url: 'http://x/', sandbox, headers: { cookie: 'a\r\nx: y' } })).rejects.toThrow(
      'headers: the value of cookie must be a string on one line',
    );
    await expect(checkTokenRoute({ url: 'http://x/', sandbox, forceWindowMs: -1 })).rejects.toThrow(/forceWindowMs must be/);
  });
});

// ----- webhook receivers -------------------------------------------------------------------

const hmac = (body: Buffer | string, key = secret) => createHmac('sha256', key).update(body).digest('hex');

/** The package's own handler (as the recipes use it), with a callback count. */
function goodReceiver(o: { dedup?: boolean; maxBodyBytes?: number } = {}) {
  let effects = 0;
  const handler = toNodeHandler(
    createWebhookHandler({
      secret,
      onLogisticsUpdated: () => void effects++,
      onError: () => {},
      ...(o.dedup ? { dedup: createMemoryDedupStore() } : {}),
      ...(o.maxBodyBytes ? { maxBodyBytes: o.maxBodyBytes } : {}),
    }),
  );
  return { handler, effects: () => effects };
}

/** A receiver written by hand: verify(raw, header) decides; `work` runs for each accepted push. */
function handReceiver(verify: (raw: Buffer, signature: string | undefined) => boolean, o: { delayMs?: number } = {}) {
  let effects = 0;
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    const header = req.headers['x-channel-webhook-signature'] as string | undefined;
    let ok = false;
    try {
      ok = verify(raw, header);
    } catch {
      ok = false;
    }
    if (!ok) return void res.writeHead(401).end('{"error":"bad signature"}');
    effects++;
    setTimeout(() => res.writeHead(200).end('{"ok":true}'), o.delayMs ?? 0);
  };
  return { handler, effects: () => effects };
}

describe('checkWebhook', { timeout: 60_000 }, () => {
  test("the package's handler with dedup passes every check; with effects the repeat is checked exactly", async () => {
    const receiver = goodReceiver({ dedup: true });
    const url = (await serve(receiver.handler)) + '/webhooks/channel';
    const report = await checkWebhook({ url, secret });
    expect(statuses(report)).toEqual({
      signed: 'pass',
      'uppercase-hex': 'pass',
      tampered: 'pass',
      unsigned: 'pass',
      'bad-signatures': 'pass',
      'raw-bytes': 'pass',
      duplicate: 'pass',
      large: 'pass',
      timing: expect.stringMatching(/^(pass|warn)$/), // a warning only on a machine slow enough to take 4 s
    });
    expect(line(report, 'duplicate').detail).toBe('the repeat got HTTP 200 {"duplicate":true}: handled once');
    expect(line(report, 'large').detail).toMatch(/^1,048,576 bytes: HTTP 200 in \d+ ms$/);
    expect(line(report, 'raw-bytes').detail).toBe('the same JSON with other whitespace: HTTP 200 signed as sent, HTTP 401 signed as re-serialised');
    const exact = await checkWebhook({ url, secret, effects: receiver.effects });
    expect(line(exact, 'duplicate')).toMatchObject({ status: 'pass', detail: expect.stringMatching(/^the repeat got HTTP 200; effects (\d+) → (\d+) → \2$/) });
    expect(JSON.stringify(report)).not.toContain(secret);
  });

  test('a receiver verifying with another secret: the signed line names the secret mismatch, with the fix; a receiver refusing for another reason does not', async () => {
    const other = toNodeHandler(createWebhookHandler({ secret: 'whsec_not_this_one', onLogisticsUpdated: () => {}, onError: () => {} }));
    // Refuses a correct push with 401, but takes an unsigned one: not a secret mismatch.
    const odd = handReceiver((_raw, signature) => signature === undefined);
    const [mismatch, elsewise] = await Promise.all([
      checkWebhook({ url: (await serve(other)) + '/webhooks/channel', secret }),
      checkWebhook({ url: (await serve(odd.handler)) + '/webhooks/channel', secret }),
    ]);
    expect(line(mismatch, 'signed')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(
        /^HTTP 401 .*: a push signed with this secret is refused like an unsigned or tampered one: your receiver verifies with another secret$/,
      ),
      fix: expect.stringMatching(/^give your receiver the webhook secret of your integration configuration/),
    });
    expect(mismatch.counts.fail).toBe(1);
    expect(line(elsewise, 'signed')).toMatchObject({ status: 'fail', detail: 'HTTP 401 {"error":"bad signature"}' });
  });

  test('a receiver that re-serialises the body before verifying is caught on the raw-bytes line', async () => {
    const receiver = handReceiver((raw, signature) => hmac(JSON.stringify(JSON.parse(raw.toString()))) === signature?.toLowerCase());
    const report = await checkWebhook({ url: await serve(receiver.handler), secret });
    expect(statuses(report)).toMatchObject({ signed: 'pass', 'uppercase-hex': 'pass', tampered: 'pass', 'raw-bytes': 'fail' });
    expect(line(report, 'raw-bytes')).toMatchObject({
      detail:
        'refused the same JSON with other whitespace signed over its exact bytes (HTTP 401 {"error":"bad signature"}), and accepted it signed over the re-serialised JSON: the receiver verifies a re-serialised body',
      fix: expect.stringMatching(/^verify the body exactly as received, before parsing it, never JSON\.stringify\(req\.body\)/),
    });
  });

  test('a receiver that accepts a bad signature (verifies nothing) fails the tampered, unsigned, bad-signature and raw-bytes lines', async () => {
    const receiver = handReceiver(() => true);
    const report = await checkWebhook({ url: await serve(receiver.handler), secret });
    expect(statuses(report)).toMatchObject({ signed: 'pass', tampered: 'fail', unsigned: 'fail', 'bad-signatures': 'fail', 'raw-bytes': 'fail' });
    expect(line(report, 'tampered').detail).toBe('a body altered after signing was accepted: HTTP 200');
    expect(line(report, 'bad-signatures').detail).toBe(
      'accepted: signed with another secret (HTTP 200); an empty signature (HTTP 200); the first 32 of the 64 hex digits (HTTP 200); 64 characters that are not hex (HTTP 200)',
    );
  });

  test('a receiver that compares the hex case-sensitively is caught on the upper-case line only', async () => {
    const receiver = handReceiver((raw, signature) => signature === hmac(raw));
    const report = await checkWebhook({ url: await serve(receiver.handler), secret });
    expect(line(report, 'uppercase-hex')).toMatchObject({
      status: 'fail',
      detail: 'refused: HTTP 401 {"error":"bad signature"}',
      fix: expect.stringMatching(/^compare the hex case-insensitively/),
    });
    expect(report.counts.fail).toBe(1);
  });

  test('a receiver that decodes the hex with Buffer.from (accepts trailing junk) gets a warning, not a failure', async () => {
    const receiver = handReceiver((raw, signature) => timingSafeEqual(Buffer.from(signature ?? '', 'hex'), createHmac('sha256', secret).update(raw).digest()));
    const report = await checkWebhook({ url: await serve(receiver.handler), secret });
    expect(line(report, 'bad-signatures')).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('the right signature followed by "zz" was accepted'),
    });
    expect(report.ok).toBe(true);
  });

  test('a receiver that runs the callback twice: a warning from outside, a failure with effects', async () => {
    const receiver = goodReceiver();
    const url = await serve(receiver.handler);
    const outside = await checkWebhook({ url, secret });
    expect(line(outside, 'duplicate')).toMatchObject({
      status: 'warn',
      detail: 'the repeat got HTTP 200 like a new push: whether the callback ran twice cannot be seen from outside',
    });
    expect(outside.ok).toBe(true);
    const exact = await checkWebhook({ url, secret, effects: receiver.effects });
    expect(line(exact, 'duplicate')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/^the repeat got HTTP 200 and the callback had its effect again \(effects (\d+) → \d+ → \d+\)$/),
      fix: expect.stringMatching(/^remember the pushes you handled: dedup: createMemoryDedupStore\(\)/),
    });
    expect(exact.ok).toBe(false);
  });

  test('dedup by lease: repeats refused while the first finishes, then 2xx, pass; refused for good, fail', async () => {
    const seen = new Map<string, number>();
    const leasing = (forever: boolean) => async (req: IncomingMessage, res: ServerResponse) => {
      const raw = await readBody(req);
      if (hmac(raw) !== (req.headers['x-channel-webhook-signature'] as string | undefined)?.toLowerCase()) return void res.writeHead(401).end();
      const key = hmac(raw, 'dedup');
      const times = seen.get(key) ?? 0;
      seen.set(key, times + 1);
      if (times === 0) return void res.writeHead(200).end('{"ok":true}');
      if (forever || times < 3) return void res.writeHead(409).end('{"error":"in progress"}');
      res.writeHead(200).end('{"ok":true,"duplicate":true}');
    };
    const finishing = await checkWebhook({ url: await serve(leasing(false)), secret });
    expect(line(finishing, 'duplicate')).toMatchObject({
      status: 'pass',
      detail: 'the repeat got HTTP 200 {"duplicate":true} after 2 refusals (HTTP 409) while the first was finishing: handled once',
    });
    const stuck = await checkWebhook({ url: await serve(leasing(true)), secret });
    expect(line(stuck, 'duplicate')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/^a repeat of a push it had acknowledged: HTTP 409 \{"error":"in progress"\} \(\d+ tries over [\d.]+ s\)$/),
    });
  });

  test('a 100 KB body limit is caught on the 1 MiB line', async () => {
    const receiver = goodReceiver({ dedup: true, maxBodyBytes: 100 * 1024 });
    const report = await checkWebhook({ url: await serve(receiver.handler), secret });
    expect(line(report, 'large')).toMatchObject({
      status: 'fail',
      detail: '1,048,576 bytes: HTTP 413 {"error":"payload too large"}',
      fix: expect.stringMatching(/^accept bodies up to 1 MiB/),
    });
    expect(report.counts.fail).toBe(1);
  });

  test('a receiver that answers after 8 s fails the signed push and the timing line; the rest waits for nothing', async () => {
    const receiver = handReceiver((raw, signature) => hmac(raw) === signature?.toLowerCase(), { delayMs: 8_500 });
    const started = performance.now();
    const report = await checkWebhook({ url: await serve(receiver.handler), secret });
    expect(statuses(report)).toEqual({
      signed: 'fail',
      'uppercase-hex': 'skip',
      tampered: 'pass',
      unsigned: 'pass',
      'bad-signatures': 'pass',
      'raw-bytes': 'skip',
      duplicate: 'skip',
      large: 'skip',
      timing: 'fail',
    });
    expect(line(report, 'signed')).toMatchObject({ detail: 'no answer within 8000 ms', fix: expect.stringMatching(/^answer within 8 s: acknowledge first/) });
    expect(line(report, 'timing').detail).toBe('no answer within 8 s: signed push');
    expect(performance.now() - started).toBeLessThan(30_000); // one window, not one per push
  });

  test('no receiver at the URL: one failure, the rest skipped; bad options: ConfigError', async () => {
    const report = await checkWebhook({ url: (await closedUrl()) + '/webhooks/channel', secret });
    expect(report.counts).toEqual({ pass: 0, fail: 1, warn: 0, skip: 8 });
    expect(line(report, 'signed')).toMatchObject({
      detail: 'connection refused (is your app running on that port?)',
      fix: 'start your app and pass the URL of its webhook route',
    });
    await expect(checkWebhook({ url: 'http://127.0.0.1:1/', secret: '' })).rejects.toThrow(
      /secret: the webhook secret your receiver verifies with is required/,
    );
    await expect(checkWebhook({ url: 'http://127.0.0.1:1/', secret, efects: () => 1 } as never)).rejects.toThrow(
      'unknown checkWebhook option "efects"; did you mean "effects"?',
    );
  });
});

test('formatCheckReport: one line per check, the fix under a failure or warning, then the count', () => {
  const text = formatCheckReport({
    target: 'webhook',
    url: 'http://127.0.0.1:3000/webhooks/channel',
    ok: false,
    counts: { pass: 1, fail: 1, warn: 1, skip: 1 },
    checks: [
      { id: 'signed', title: 'a signed push gets 2xx', status: 'pass', detail: 'HTTP 200 in 3 ms' },
      {
        id: 'uppercase-hex',
        title: 'an upper-case hex signature is accepted',
        status: 'fail',
        detail: 'refused: HTTP 401',
        fix: 'compare the hex case-insensitively',
      },
      { id: 'duplicate', title: 'the same push twice has its effect once', status: 'warn', detail: 'like a new push', fix: 'dedup' },
      { id: 'large', title: 'a 1 MiB push gets 2xx', status: 'skip', detail: 'why' },
    ],
  });
  expect(text).toBe(
    [
      'channel-sandbox check webhook http://127.0.0.1:3000/webhooks/channel',
      '✓ a signed push gets 2xx: HTTP 200 in 3 ms',
      '✗ an upper-case hex signature is accepted: refused: HTTP 401',
      '    fix: compare the hex case-insensitively',
      '⚠ the same push twice has its effect once: like a new push',
      '    fix: dedup',
      '– a 1 MiB push gets 2xx: why',
      '4 checks: 1 passed, 1 failed, 1 warning, 1 skipped',
    ].join('\n'),
  );
});
