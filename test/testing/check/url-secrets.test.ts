/**
 * A credential in the query of the URL checked (a receiver guarded by `?key=…`, a preview
 * deployment's `?x-vercel-protection-bypass=…`: the service sends only its own headers, so a
 * receiver's guard often sits there) is never printed (issue #47): not in the report's URL, not in
 * an answer that echoes the URL back (an HTML login page, a framework's 404). Short values
 * (`?force=1`) are no secret and stay. Local node:http servers on 127.0.0.1:0.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { runDoctor } from '../../../src/testing/check/doctor.js';
import { checkWebhook, formatCheckReport } from '../../../src/testing.js';

const KEY = 'QUERYKEY9d8c7b6a5f4e';
let server: Server;
let base: string;

beforeAll(async () => {
  // Echoes the path and query back, as a login page's ?next= or a framework's error page does.
  server = createServer((req, res) => {
    res.writeHead(401, { 'content-type': 'text/html' });
    res.end(`<html><a href="/login?next=${encodeURIComponent(req.url ?? '')}">sign in</a> to reach ${req.url}</html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));

test('check webhook: the key in the receiver URL is masked in its heading and in the answers quoted', async () => {
  const report = await checkWebhook({ url: `${base}/hooks/channel?key=${KEY}&v=2`, secret: 'whsec_url' });
  const printed = JSON.stringify(report) + formatCheckReport(report);
  expect(report.url).toBe(`${base}/hooks/channel?key=[secret]&v=2`);
  expect(printed).toContain('sign in');
  expect(printed).not.toContain(KEY.slice(0, 8));
});

test('doctor: a bypass token in the token route URL is masked in the report, text and JSON', async () => {
  const report = await runDoctor({ tokenRoute: `${base}/api/channel-token?x-vercel-protection-bypass=${KEY}` });
  expect(report.ok).toBe(false);
  const route = report.parts.find((p) => p.target === 'token-route');
  expect(route?.url).toBe(`${base}/api/channel-token?x-vercel-protection-bypass=[secret]`);
  expect(JSON.stringify(report)).toContain('sign in');
  expect(JSON.stringify(report)).not.toContain(KEY.slice(0, 8));
});
