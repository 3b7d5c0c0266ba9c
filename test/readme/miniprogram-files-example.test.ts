/**
 * examples/miniprogram-files.js (README "Files") run as written in a WeChat-like realm: the
 * WeChat bundle (miniprogram_dist), a faithful wx (request, uploadFile, downloadFile over real
 * HTTP, chooseMedia giving a file on disk), a service that expires the first token, a token route.
 * Needs `npm run build` first (npm test does it).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import vm from 'node:vm';
import { afterAll, expect, test } from 'vitest';
import { makeJwt, patternBytes } from '../helpers/fake-service.js';
import { createHost } from '../helpers/hosts.js';
import { sendJson, startServer } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'channel-sdk-example-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The example in a WeChat-like realm against `service` and a token route answering `routeStatus`: the page's updates once it is done. */
async function runExample(serviceUrl: string, routeStatus: number, tokens: string[]) {
  const route = await startServer((_req, res) => {
    if (routeStatus !== 200) return sendJson(res, routeStatus, { error: 'no session' });
    tokens.push(makeJwt({ iat: 1, exp: 2e9, n: tokens.length }));
    sendJson(res, 200, { access_token: tokens.at(-1) });
  });
  try {
    const chosen = join(dir, 'photo.jpg');
    writeFileSync(chosen, photo);
    const wx = {
      ...createHost('wx'),
      chooseMedia: (o: { success(r: unknown): void }) => setTimeout(() => o.success({ tempFiles: [{ tempFilePath: chosen }] }), 1),
    };
    const updates: Array<Record<string, unknown>> = [];
    let page: { onChoose(): void; onUnload(): void } | undefined;
    const context = vm.createContext({
      setTimeout,
      clearTimeout,
      wx,
      getApp: () => ({ globalData: { session: 'demo-session' } }),
      Page: (p: typeof page & object) => (page = Object.assign(p, { setData: (d: Record<string, unknown>) => updates.push(d) })),
    });
    const sdk = { exports: {} };
    vm.runInContext(`(function (module, exports) {${readFileSync('miniprogram_dist/index.js', 'utf8')}\n})`, context)(sdk, sdk.exports);
    const code = readFileSync('examples/miniprogram-files.js', 'utf8')
      .replaceAll('https://channel.example.com', serviceUrl)
      .replaceAll('https://partner.example.com', route.url);
    vm.runInContext(`(function (require) {${code}\n})`, context)(() => sdk.exports);
    page!.onChoose();
    await expect.poll(() => updates.find((u) => 'invoice' in u || 'error' in u), { timeout: 10_000 }).toBeTruthy();
    return { updates, done: updates.find((u) => 'invoice' in u || 'error' in u)!, wx };
  } finally {
    await route.close();
  }
}

const photo = patternBytes(200_000);

test('examples/miniprogram-files.js: the photo goes up after one refresh, the invoice comes down, progress ends at 100', async () => {
  const tokens: string[] = [];
  const hits: string[] = [];
  const service = await startServer(async (req, res) => {
    const ok = req.headers.authorization === 'Bearer ' + tokens[1];
    hits.push(`${req.method} ${req.url} ${ok ? 200 : 401}`);
    if (!ok) return sendJson(res, 401, { code: 401, message: 'expired' });
    if (req.url === '/open/api/v1/sdk/photos') {
      const form = await new Response(new Uint8Array(req.raw), { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
      const file = form.get('file') as File;
      const sha = createHash('sha256')
        .update(Buffer.from(await file.arrayBuffer()))
        .digest('hex');
      return sendJson(res, 200, { code: 0, data: { url: 'https://cdn.example/' + sha.slice(0, 12), order: form.get('order_no') } });
    }
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': 5000 }).end(patternBytes(5000));
  });
  try {
    const { updates, done, wx } = await runExample(service.url, 200, tokens);
    expect(done.error).toBeUndefined();
    expect(done.photo).toBe('https://cdn.example/' + createHash('sha256').update(photo).digest('hex').slice(0, 12));
    expect(readFileSync(String(done.invoice)).equals(patternBytes(5000))).toBe(true);
    const percents = updates.filter((u) => 'percent' in u).map((u) => u.percent as number);
    expect(percents.at(-1)).toBe(100);
    expect(percents).toEqual(percents.toSorted((a, b) => a - b));
    // The first token is never accepted here: one 401, one forced refresh, the file sent once more.
    expect(hits).toEqual(['POST /open/api/v1/sdk/photos 401', 'POST /open/api/v1/sdk/photos 200', 'GET /open/api/v1/sdk/invoices/SO20240601001 200']);
    expect(wx.uploads[0].enableHttp2).toBe(true);
  } finally {
    await service.close();
  }
});

test("examples/miniprogram-files.js with a token route answering 401: the page's error names the route's status (#29 item 9)", async () => {
  const service = await startServer((_req, res) => sendJson(res, 200, { code: 0, data: {} }));
  try {
    const { done } = await runExample(service.url, 401, []);
    expect(String(done.error)).toContain('token route answered 401');
    expect(String(done.error)).not.toContain('is a `return` missing');
  } finally {
    await service.close();
  }
});
