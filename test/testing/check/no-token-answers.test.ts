/**
 * A token route that answers 2xx with no token in it (issue #47, doctor's token-route part): the
 * fix names what answered. A proxy's or an SSO's sign-in page (HTTP 200 text/html), and a front
 * end's index.html served for every path (a dev server's fallback), are not the route; a 204 is
 * no answer. Before, each got "your tokenProvider returns that string". Local node:http servers.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { runDoctor } from '../../../src/testing/check/doctor.js';

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/sso') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Sign in</title><form>…</form>');
    else if (req.url === '/spa') res.writeHead(200, { 'content-type': 'application/octet-stream' }).end('\n<html><div id="root"></div></html>');
    else if (req.url === '/empty') res.writeHead(204).end();
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));

async function tokenLine(path: string) {
  const report = await runDoctor({ tokenRoute: base + path, headers: { cookie: 'session=demo-session-1234' } });
  return report.parts.find((p) => p.target === 'token-route')?.checks.find((c) => c.id === 'token');
}

test.each([
  ['a sign-in page (text/html)', '/sso', /an HTML page answered, not your route: a sign-in page .* or your front end's index\.html/],
  ['an index.html without an HTML content type', '/spa', /an HTML page answered, not your route/],
  ['HTTP 204', '/empty', /answer HTTP 200 with the JSON body \{ access_token: token \} .*: this answer had no body/],
  ['JSON without a token', '/json', /^answer \{ access_token: token \} \(createTokenRoute does\): your tokenProvider returns that string$/],
])('%s: the fix names it', async (_case, path, fix) => {
  const line = await tokenLine(path);
  expect(line?.status).toBe('fail');
  expect(line?.fix).toMatch(fix);
});
