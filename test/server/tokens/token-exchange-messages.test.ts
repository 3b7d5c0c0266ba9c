/**
 * What a failed token exchange tells the partner (#23.4), against real servers: the URL, the
 * HTTP status or the network error's code, and what to check. Never the secret key or a token.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createTokenExchange, TokenExchangeError } from '../../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { startServer, type TestServer } from '../../helpers/server.js';

let sandbox: Sandbox;
const servers: TestServer[] = [];
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await Promise.all([sandbox?.close(), ...servers.map((s) => s.close())]);
});

const secretKey = 'sk_live_0123456789abcdef_do_not_print';
async function failure(baseUrl: string, key = secretKey, accessKey = sandbox.credentials.accessKey): Promise<TokenExchangeError> {
  const error = await createTokenExchange({ baseUrl, accessKey, secretKey: key, timeout: 5000 })
    .getToken('user-1')
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TokenExchangeError);
  const all = JSON.stringify({ ...(error as object), message: (error as Error).message, stack: (error as Error).stack });
  expect(all).not.toContain(key);
  return error as TokenExchangeError;
}

/** A port on 127.0.0.1 where nothing listens (one that was just free). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

test('a wrong secretKey (the real sandbox answers 401 code 40101 signature mismatch): the message names the URL, status and code, and says to check the secret key and the sign scheme', async () => {
  const error = await failure(sandbox.url, 'sk_wrong_' + 'x'.repeat(20));
  expect(error.status).toBe(401);
  expect(error.apiCode).toBe(40101);
  expect(error.message).toContain(`the token endpoint ${sandbox.url}/open/api/v1/sdk/tokens answered HTTP 401 with code 40101: signature mismatch.`);
  expect(error.message).toMatch(/check that secretKey is the secret key paired with accessKey in the integration configuration/);
  expect(error.message).toMatch(/that sign follows the service's signing scheme/);
});

test('an unreachable service: the message names the URL, the errno code (ECONNREFUSED, ENOTFOUND) and what to check', async () => {
  const port = await closedPort();
  const refused = await failure(`http://127.0.0.1:${port}`);
  expect(refused.message).toContain(`could not reach the token endpoint http://127.0.0.1:${port}/open/api/v1/sdk/tokens: ECONNREFUSED`);
  expect(refused.message).toMatch(
    new RegExp(`Nothing accepts connections at 127\\.0\\.0\\.1:${port}: check the host and port in baseUrl, and that the service runs there`),
  );
  expect(refused.message).not.toMatch(/TypeError: fetch failed$/);
  // .invalid never resolves (RFC 2606); without a DNS server the lookup fails with EAI_AGAIN instead.
  const unknown = await failure('https://channel.does-not-exist.invalid');
  expect(unknown.message).toMatch(
    /could not reach the token endpoint https:\/\/channel\.does-not-exist\.invalid\/open\/api\/v1\/sdk\/tokens: (ENOTFOUND|EAI_AGAIN)/,
  );
  expect(unknown.message).toMatch(/channel\.does-not-exist\.invalid (does not resolve: check baseUrl for a typo|failed for now: check this server's DNS)/);
});

test('a baseUrl that is not the service (a web site answering HTML, a JSON API, a 404): the message names the URL, the HTTP status and that baseUrl may be wrong', async () => {
  const site = await startServer(
    (_req, res) => void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html><html><body>Welcome</body></html>'),
  );
  const api = await startServer((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","version":"2.1"}'));
  const missing = await startServer((_req, res) => void res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>Not Found</body></html>'));
  servers.push(site, api, missing);
  const html = await failure(site.url);
  expect(html.status).toBe(200);
  expect(html.message).toContain(
    `the answer of ${site.url}/open/api/v1/sdk/tokens (HTTP 200, text/html; charset=utf-8) is not the token endpoint's { code: 0, data: { access_token, expires_in, token_type: 'Bearer' } }: it is an HTML page.`,
  );
  expect(html.message).toContain(`baseUrl (${site.url}) may point at another server (a web page, a gateway, your own app) rather than the Channel service`);
  const json = await failure(api.url);
  expect(json.message).toMatch(
    /\(HTTP 200, application\/json\) is not the token endpoint's .*: it is a JSON object without "code" \(keys "status", "version"\)\. baseUrl/,
  );
  const notFound = await failure(missing.url);
  expect(notFound.status).toBe(404);
  expect(notFound.message).toContain(
    `the token endpoint ${missing.url}/open/api/v1/sdk/tokens answered HTTP 404 (an HTML page). Nothing answers tokens at that path: baseUrl (${missing.url}) may point at another server`,
  );
  // The path itself in baseUrl: the SDK adds it.
  const doubled = await failure(sandbox.url + '/open/api/v1/sdk/tokens');
  expect(doubled.message).toMatch(
    /baseUrl must be the service's root \(e\.g\. https:\/\/channel\.example\.com\) without \/open\/api\/…: the SDK adds the path/,
  );
});
