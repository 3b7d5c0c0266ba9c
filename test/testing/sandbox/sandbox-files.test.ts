/**
 * The sandbox's own file routes (issue #35 item 2): what the README's files example
 * (examples/miniprogram-files.js) uploads and downloads. Before them, `channel-sandbox start`
 * answered 404 to both and the example could not run against it.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { createClient as createBrowserClient } from '../../../src/index.js';
import { createClient } from '../../../src/miniprogram.js';
import { SANDBOX_CODES, SANDBOX_PATHS, type Sandbox } from '../../../src/testing.js';
import { patternBytes } from '../../helpers/fake-service.js';
import { createHost } from '../../helpers/hosts.js';
import { sandboxWith } from '../helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'channel-sdk-sandbox-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** A WeChat client on the host emulation (real HTTP), its provider's calls counted. */
function wxClient(sandbox: Sandbox) {
  const wx = createHost('wx');
  const forced: boolean[] = [];
  const client = createClient({
    baseUrl: sandbox.url,
    tokenProvider: async ({ forceRefresh }) => (forced.push(forceRefresh), sandbox.issueToken('u1')),
    request: wx.request,
    uploadFile: wx.uploadFile,
    downloadFile: wx.downloadFile,
  });
  return { wx, client, forced };
}

describe("the sandbox's file routes (the README's files example)", () => {
  test('a photo goes up through wx.uploadFile and its bytes come back intact through wx.downloadFile', async () => {
    const sandbox = await sandboxWith();
    const { client } = wxClient(sandbox);
    const bytes = patternBytes(300_000);
    const filePath = join(dir, 'photo.jpg');
    writeFileSync(filePath, bytes);
    const photo = await client.upload<{ id: string; url: string; size: number; sha256: string; field: string; file_name: string; fields: object }>(
      SANDBOX_PATHS.photos,
      { filePath, name: 'file', formData: { order_no: 'SO20240601001' } },
    );
    expect(photo).toEqual({
      id: 'ph_1',
      url: sandbox.url + '/open/api/v1/sdk/photos/ph_1',
      field: 'file',
      file_name: 'photo.jpg',
      content_type: 'application/octet-stream',
      size: 300_000,
      sha256: sha256(bytes),
      fields: { order_no: 'SO20240601001' },
    });
    const { tempFilePath, statusCode } = await client.download(photo.url);
    expect(statusCode).toBe(200);
    expect(readFileSync(tempFilePath).equals(bytes)).toBe(true);
  });

  test('an invoice download after expireTokens(): one 401, one forced refresh, the PDF (never the 401 body)', async () => {
    const sandbox = await sandboxWith();
    const { client, forced, wx } = wxClient(sandbox);
    await client.get(SANDBOX_PATHS.orders);
    sandbox.expireTokens();
    const { tempFilePath } = await client.download('/open/api/v1/sdk/invoices/SO20240601001');
    const pdf = readFileSync(tempFilePath, 'latin1');
    expect(pdf.startsWith('%PDF-1.4\n')).toBe(true);
    expect(pdf).toContain('(Invoice SO20240601001, a channel-sandbox stand-in) Tj');
    expect(pdf.trimEnd().endsWith('%%EOF')).toBe(true);
    // The xref offsets point at the objects: a reader can open it.
    const xref = Number(/startxref\n(\d+)/.exec(pdf)?.[1]);
    expect(pdf.slice(xref, xref + 4)).toBe('xref');
    for (const [n, at] of [...pdf.slice(xref).matchAll(/^(\d{10}) 00000 n $/gm)].map((m, i) => [i + 1, Number(m[1])]))
      expect(pdf.slice(at, at + 8)).toBe(`${n} 0 obj\n`);
    expect(forced).toEqual([false, true]);
    expect(wx.downloads.map((d) => d.header.authorization === wx.downloads[0].header.authorization)).toEqual([true, false]);
    expect(sandbox.stats).toMatchObject({ unauthorized: 1, dataCalls: 3 });
  });

  test('an upload after expireTokens() is sent once more after one forced refresh, its bytes intact', async () => {
    const sandbox = await sandboxWith();
    const { client, forced, wx } = wxClient(sandbox);
    await client.get(SANDBOX_PATHS.orders);
    sandbox.expireTokens();
    const bytes = patternBytes(70_000);
    const filePath = join(dir, 'again.png');
    writeFileSync(filePath, bytes);
    const photo = await client.upload<{ sha256: string; id: string }>(SANDBOX_PATHS.photos, { filePath, name: 'photo' });
    expect([photo.sha256, photo.id, forced, wx.uploads.length]).toEqual([sha256(bytes), 'ph_1', [false, true], 2]);
  });

  test('the browser entry uploads a Blob and gets it back as a Blob', async () => {
    const sandbox = await sandboxWith();
    const client = createBrowserClient({ baseUrl: sandbox.url, tokenProvider: () => sandbox.issueToken('u1') });
    const bytes = patternBytes(5_000);
    const photo = await client.upload<{ url: string; file_name: string; content_type: string }>(SANDBOX_PATHS.photos, {
      file: new Blob([new Uint8Array(bytes)], { type: 'image/png' }),
      fileName: 'p.png',
      name: 'file',
    });
    expect([photo.file_name, photo.content_type]).toEqual(['p.png', 'image/png']);
    const back = await client.download(photo.url);
    expect([back.type, Buffer.from(await back.arrayBuffer()).equals(bytes)]).toEqual(['image/png', true]);
  });

  test('refusals: no file part 400, a body over 10 MiB 413, unknown photo or order 404, wrong method 405, no token 401, failNext first', async () => {
    const sandbox = await sandboxWith();
    const auth = { authorization: 'Bearer ' + (await sandbox.issueToken('u1')) };
    const send = async (path: string, init: RequestInit = {}) => {
      const r = await fetch(sandbox.url + path, { ...init, headers: { ...auth, ...(init.headers as object) } });
      return [r.status, ((await r.json()) as { code: number; message: string }).code];
    };
    const form = new FormData();
    form.set('order_no', 'SO20240601001');
    expect(await send(SANDBOX_PATHS.photos, { method: 'POST', body: form })).toEqual([400, SANDBOX_CODES.badRequest]);
    expect(await send(SANDBOX_PATHS.photos, { method: 'POST', body: '{"not":"multipart"}', headers: { 'content-type': 'application/json' } })).toEqual([
      400,
      SANDBOX_CODES.badRequest,
    ]);
    const big = new FormData();
    big.set('file', new Blob([new Uint8Array(10 * 1024 * 1024 + 1)]), 'big.jpg');
    expect(await send(SANDBOX_PATHS.photos, { method: 'POST', body: big })).toEqual([413, SANDBOX_CODES.tooLarge]);
    expect(await send('/open/api/v1/sdk/photos/ph_9')).toEqual([404, SANDBOX_CODES.notFound]);
    expect(await send('/open/api/v1/sdk/invoices/SO1')).toEqual([404, SANDBOX_CODES.notFound]);
    expect(await send(SANDBOX_PATHS.photos)).toEqual([405, SANDBOX_CODES.methodNotAllowed]);
    expect(await send('/open/api/v1/sdk/invoices/SO20240601001', { method: 'POST', body: '' })).toEqual([405, SANDBOX_CODES.methodNotAllowed]);
    const anonymous = await fetch(sandbox.url + '/open/api/v1/sdk/invoices/SO20240601001');
    expect([anonymous.status, ((await anonymous.json()) as { code: number }).code]).toEqual([401, SANDBOX_CODES.unauthorized]);
    sandbox.failNext(1);
    expect(await send('/open/api/v1/sdk/invoices/SO20240601001')).toEqual([401, SANDBOX_CODES.failNext]);
  });
});
