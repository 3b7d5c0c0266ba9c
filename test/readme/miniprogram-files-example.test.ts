/**
 * examples/miniprogram-files.js (README "Files") run as written against the sandbox, whose own
 * file routes answer its two paths (issue #35: before them it answered 404): the WeChat bundle
 * (miniprogram_dist), a faithful wx (request, uploadFile, downloadFile over real HTTP,
 * chooseMedia giving a file on disk) and a token route over the sandbox. Needs `npm run build`.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import vm from 'node:vm';
import { afterAll, expect, test } from 'vitest';
import { startSandbox } from '../../src/testing.js';
import { patternBytes } from '../helpers/fake-service.js';
import { createHost } from '../helpers/hosts.js';
import { sendJson, startServer } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'channel-sdk-example-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The example in a WeChat-like realm (the WeChat bundle, a faithful wx whose chooseMedia gives
 * `photo` from disk) against `serviceUrl` and a token route at `routeUrl`. `choose()` runs the
 * page's onChoose and resolves to the page's updates until the invoice or an error.
 */
function loadExample(serviceUrl: string, routeUrl: string, photo: Buffer) {
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
    .replaceAll('https://partner.example.com', routeUrl);
  vm.runInContext(`(function (require) {${code}\n})`, context)(() => sdk.exports);
  const choose = async () => {
    const from = updates.length;
    page!.onChoose();
    await expect.poll(() => updates.slice(from).find((u) => 'invoice' in u || 'error' in u), { timeout: 10_000 }).toBeTruthy();
    return updates.slice(from);
  };
  return { wx, choose };
}

test('examples/miniprogram-files.js against the sandbox: the photo goes up intact, the invoice comes down; after expire one forced refresh sends the photo again', async () => {
  const sandbox = await startSandbox();
  const forced: boolean[] = [];
  const route = await startServer(async (req, res) => {
    forced.push(req.url!.startsWith('/channel-token?force=1'));
    sendJson(res, 200, { access_token: await sandbox.issueToken('user-1') });
  });
  try {
    const photo = patternBytes(200_000);
    const { wx, choose } = loadExample(sandbox.url, route.url, photo);
    const first = await choose();
    sandbox.expireTokens();
    const second = await choose();
    for (const run of [first, second]) {
      const done = run.find((u) => 'invoice' in u || 'error' in u)!;
      expect(done.error).toBeUndefined();
      // The photo's URL is the sandbox's: what it stored are the bytes sent.
      const stored = await fetch(String(done.photo), { headers: { authorization: 'Bearer ' + (await sandbox.issueToken('qa')) } });
      expect(
        createHash('sha256')
          .update(Buffer.from(await stored.arrayBuffer()))
          .digest('hex'),
      ).toBe(createHash('sha256').update(photo).digest('hex'));
      expect(readFileSync(String(done.invoice), 'latin1')).toMatch(/^%PDF-1\.4\n[\s\S]*Invoice SO20240601001[\s\S]*%%EOF\n$/);
      const percents = run.filter((u) => 'percent' in u).map((u) => u.percent as number);
      expect([percents.at(-1), percents]).toEqual([100, percents.toSorted((a, b) => a - b)]);
    }
    // One token, then after the expiry the upload's 401 costs one forced refresh and the file goes again.
    expect(forced).toEqual([false, true]);
    expect([wx.uploads.length, wx.downloads.length, sandbox.stats.unauthorized]).toEqual([3, 2, 1]);
    expect(wx.uploads[0].enableHttp2).toBe(true);
  } finally {
    await sandbox.close();
    await route.close();
  }
});

test("examples/miniprogram-files.js with a token route answering 401: the page's error names the route's status (#29 item 9)", async () => {
  const service = await startServer((_req, res) => sendJson(res, 200, { code: 0, data: {} }));
  const route = await startServer((_req, res) => sendJson(res, 401, { error: 'no session' }));
  try {
    const done = (await loadExample(service.url, route.url, patternBytes(200_000)).choose()).find((u) => 'invoice' in u || 'error' in u)!;
    expect(String(done.error)).toContain('token route answered 401');
    expect(String(done.error)).not.toContain('is a `return` missing');
  } finally {
    await service.close();
    await route.close();
  }
});
