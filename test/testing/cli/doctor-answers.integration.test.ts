/**
 * `channel-sandbox doctor` (the built CLI, a process of its own) against apps that answer badly
 * at the transport: a token route that sends its headers and the start of its body, then nothing;
 * an https app whose certificate is self-signed (made by openssl for the test).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const servers: Server[] = [];
let plain = '';
let tls = '';
let redirecting = '';
const dir = mkdtempSync(join(tmpdir(), 'channel-doctor-tls-'));

interface Line {
  id: string;
  status: string;
  detail: string;
  fix?: string;
}
function doctor(args: string[]): Promise<{ code: number | null; lines: Record<string, Line[]> }> {
  return new Promise((resolve) => {
    const blank = { CHANNEL_BASE_URL: '', CHANNEL_ACCESS_KEY: '', CHANNEL_SECRET_KEY: '', CHANNEL_WEBHOOK_SECRET: '', REDIS_URL: '', NODE_EXTRA_CA_CERTS: '' };
    const child = spawn(process.execPath, [join(root, 'dist/sandbox-cli.js'), 'doctor', ...args, '--json'], { env: { ...process.env, ...blank } });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.on('close', (code) => {
      const report = JSON.parse(stdout) as { parts: Array<{ target: string; checks: Line[] }> };
      resolve({ code, lines: Object.fromEntries(report.parts.map((p) => [p.target, p.checks])) });
    });
  });
}
const listen = (server: Server) =>
  new Promise<string>((resolve) => {
    servers.push(server);
    server.listen(0, '127.0.0.1', () => resolve(String((server.address() as AddressInfo).port)));
  });

beforeAll(async () => {
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1'],
    {
      stdio: 'ignore',
    },
  );
  // Headers and the start of a token answer, then nothing (a route stuck after it began to answer).
  const stall = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.write('{"access_');
  });
  plain = 'http://127.0.0.1:' + (await listen(stall));
  const https = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (_req, res) => res.end('{}'));
  tls = 'https://127.0.0.1:' + (await listen(https));
  // Redirects as apps answer them: the route moved to https (same path), or a login page whose URL echoes the session.
  const redirects = createServer((req, res) => {
    const session = /session=([\w-]+)/.exec(req.headers.cookie ?? '')?.[1] ?? '';
    if (req.url?.startsWith('/moved/')) return void res.writeHead(301, { location: 'https://127.0.0.1:1' + req.url }).end();
    // Next.js (and other frameworks) answer a URL with a trailing slash with a 308 to the one without.
    if (req.url?.startsWith('/slash/')) return void res.writeHead(308, { location: req.url.replace(/\/(?=\?|$)/, '') }).end(req.url.replace(/\/(?=\?|$)/, ''));
    res
      .writeHead(302, { location: `/login/${session}?next=${encodeURIComponent(req.url ?? '')}&sid=${session}`, 'content-type': 'text/html' })
      .end('<a>login</a>');
  });
  redirecting = 'http://127.0.0.1:' + (await listen(redirects));
});
afterAll(() => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('channel-sandbox doctor: answers that never end, certificates not trusted, redirects', { timeout: 60_000 }, () => {
  test('a route that stalls after its headers is "no answer within 15000 ms", not a token answer of the wrong shape; nothing more is asked of it', async () => {
    const { code, lines } = await doctor(['--token-route', plain + '/channel-token', '--header', 'cookie: session=stalled-1']);
    expect(code).toBe(1);
    const token = lines['token-route'][0];
    expect(token).toMatchObject({ id: 'token', status: 'fail', detail: 'no answer within 15000 ms: HTTP 200 and the start of a body came, then nothing' });
    expect(token.fix).toMatch(/tokenTimeout \(10 s\)/);
    // The CORS probes would wait 15 s each for the same route.
    expect(lines['token-route'].map((l) => l.id)).not.toContain('cors');
  });

  test('a self-signed https service, route and receiver: each first line names the certificate, and the fix NODE_EXTRA_CA_CERTS', async () => {
    const { code, lines } = await doctor([
      '--service',
      tls,
      '--access-key',
      'ak_tls_test',
      '--secret-key',
      'sk_tls_test_0123',
      '--token-route',
      tls + '/channel-token',
      '--header',
      'cookie: session=tls-1',
      '--webhook-url',
      tls + '/webhooks/channel',
      '--webhook-secret',
      'whsec_tls',
    ]);
    expect(code).toBe(1);
    for (const part of ['service', 'token-route', 'webhook']) {
      const first = lines[part][0];
      expect(first.detail).toMatch(/this machine does not trust its TLS certificate: self-signed certificate$/);
      expect(first.fix).toMatch(/^give Node the CA that signed it: NODE_EXTRA_CA_CERTS=/);
    }
  });
  test('a route that redirects: to the same path elsewhere (http to https) the fix is that URL, not "pass the credentials"; to a login page, where it goes is named with the session in it masked', async () => {
    const [moved, login] = await Promise.all([
      doctor(['--token-route', redirecting + '/moved/channel-token', '--header', 'cookie: session=moved-session-1']),
      doctor(['--token-route', redirecting + '/channel-token', '--header', 'cookie: session=login-session-2']),
    ]);
    // Before: "HTTP 301 with cookie", the fix "pass the credentials your front end sends…", for a route that moved.
    expect(moved.lines['token-route'][0]).toMatchObject({
      id: 'token',
      status: 'fail',
      detail: 'HTTP 301 to https://127.0.0.1:1/moved/channel-token with cookie',
      fix: expect.stringMatching(/^your route moved: pass the URL it redirects to as --token-route \(https:\/\/127\.0\.0\.1:1\/moved\/channel-token\)/),
    });
    const token = login.lines['token-route'][0];
    expect(token.detail).toBe(`HTTP 302 to ${redirecting}/login/[secret] with cookie`);
    expect(token.fix).toMatch(/^pass the credentials your front end sends/);
    expect(JSON.stringify(login.lines)).not.toContain('login-session-2');
  });
  test('a route or receiver at a URL with a trailing slash, which the app redirects (308) to the one without: the fix is that URL, not "pass the credentials" / "look at your app\'s log"; a receiver behind a sign-in redirect is named as such', async () => {
    const [slash, login] = await Promise.all([
      doctor(
        ['--token-route', redirecting + '/slash/channel-token/', '--header', 'cookie: session=slash-session-1'].concat([
          '--webhook-url',
          redirecting + '/slash/webhooks/channel/',
          '--webhook-secret',
          'whsec_slash',
        ]),
      ),
      doctor(['--webhook-url', redirecting + '/webhooks/channel', '--webhook-secret', 'whsec_login']),
    ]);
    expect(slash.lines['token-route'][0]).toMatchObject({
      status: 'fail',
      detail: `HTTP 308 to ${redirecting}/slash/channel-token with cookie`,
      fix: expect.stringMatching(/^your route moved: pass the URL it redirects to as --token-route \(http:\/\/127\.0\.0\.1:\d+\/slash\/channel-token\)/),
    });
    expect(slash.lines.webhook[0]).toMatchObject({
      id: 'signed',
      status: 'fail',
      fix: `your receiver moved: the service follows no redirect; give it the URL this one redirects to (${redirecting}/slash/webhooks/channel), in your integration configuration and as --webhook-url`,
    });
    expect(login.lines.webhook[0]).toMatchObject({
      id: 'signed',
      status: 'fail',
      fix: expect.stringMatching(
        /^your receiver redirects to http:\/\/127\.0\.0\.1:\d+\/login\/ \(a sign-in page\?\): the service follows no redirect and sends no session/,
      ),
    });
  });
});
