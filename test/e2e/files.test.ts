/**
 * The browser entry's upload() and download() in a real Chromium page against a local
 * service (#22): multipart through ky (FormData from a File), the 401 -> one refresh -> the file
 * sent once more, progress in ky's shape, a Blob download, an error never handed over as the
 * file. The server speaks HTTP/1.1, where Chromium refuses ky's streamed upload (needed for its
 * upload progress): the SDK must still deliver the file, once.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hasChromium, listen, openPackagePage } from '../helpers/chromium.js';
import { patternBytes } from '../helpers/fake-service.js';
import { makeJwt } from '../helpers/fake-service.js';

describe.runIf(hasChromium)('browser entry files in Chromium', () => {
  const tokens = [makeJwt({ iat: 1, exp: 2e9, n: 1 }), makeJwt({ iat: 1, exp: 2e9, n: 2 })];
  const hits: Array<{ path: string; status: number; bytes: number; sha256?: string }> = [];
  let expired = false;
  let api: Awaited<ReturnType<typeof listen>>;
  let browser: Awaited<ReturnType<typeof openPackagePage>>;

  beforeAll(async () => {
    api = await listen((req, res) => {
      const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization, content-type, accept' };
      if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const raw = Buffer.concat(chunks);
        const auth = String(req.headers.authorization);
        const ok = auth === 'Bearer ' + tokens[1] || (!expired && auth === 'Bearer ' + tokens[0]);
        const path = req.url ?? '';
        if (!ok) {
          hits.push({ path, status: 401, bytes: raw.length });
          return void res.writeHead(401, { ...cors, 'content-type': 'application/json' }).end('{"code":401,"message":"expired"}');
        }
        if (path.startsWith('/upload')) {
          const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
          const file = form.get('photo') as File;
          const bytes = Buffer.from(await file.arrayBuffer());
          const sha256 = createHash('sha256').update(bytes).digest('hex');
          hits.push({ path, status: 200, bytes: raw.length, sha256 });
          return void res
            .writeHead(200, { ...cors, 'content-type': 'application/json' })
            .end(JSON.stringify({ code: 0, data: { name: file.name, size: bytes.length, sha256, note: form.get('note') } }));
        }
        if (path.startsWith('/download')) {
          const n = Number(path.split('/')[2]);
          hits.push({ path, status: n ? 200 : 404, bytes: 0 });
          if (!n) return void res.writeHead(404, { ...cors, 'content-type': 'application/json' }).end('{"error":"no such file"}');
          // In 4 parts 30 ms apart, as a network delivers it: written at once, the whole body can
          // reach the page as one chunk, whose only progress report is the final one.
          const bytes = patternBytes(n);
          res.writeHead(200, { ...cors, 'content-type': 'application/octet-stream', 'content-length': n });
          const part = Math.ceil(n / 4);
          const write = (at: number): void => void (at >= n ? res.end() : (res.write(bytes.subarray(at, at + part)), setTimeout(() => write(at + part), 30)));
          return write(0);
        }
        res.writeHead(404, cors).end();
      });
    });
    browser = await openPackagePage(['createClient']);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    api?.server.closeAllConnections();
    api?.server.close();
  });

  test('upload of a File after expiry: one refresh, the same bytes sent once more, progress non-decreasing to 1; download into a Blob; a 404 is an HttpError', async () => {
    expired = true;
    const size = 1_500_000;
    const result = await browser.page.evaluate(
      async ([baseUrl, jwts, n]) => {
        const w = window as unknown as {
          createClient: (o: object) => {
            upload(p: string, o: object): Promise<unknown>;
            download(p: string, o?: object): Promise<Blob>;
            getToken(): Promise<string>;
          };
        };
        const forced: boolean[] = [];
        const client = w.createClient({
          baseUrl,
          tokenProvider: ({ forceRefresh }: { forceRefresh: boolean }) => (forced.push(forceRefresh), jwts[forced.length - 1]),
        });
        const bytes = new Uint8Array(n).map((_, i) => i % 251);
        const progress: Array<{ percent: number; transferredBytes: number; totalBytes: number }> = [];
        const uploaded = await client.upload('/upload', {
          file: new File([bytes], 'photo.jpg', { type: 'image/jpeg' }),
          name: 'photo',
          formData: { note: 'hi' },
          onProgress: (p: (typeof progress)[0]) => progress.push(p),
        });
        const downProgress: number[] = [];
        const blob = await client.download('/download/300000', { onProgress: (p: { percent: number }) => downProgress.push(p.percent) });
        const head = Array.from(new Uint8Array(await blob.arrayBuffer()).slice(0, 260));
        const missing = await client.download('/download/0').then(
          () => 'resolved',
          (e: { code: string; status: number }) => e.code + ' ' + e.status,
        );
        return { uploaded, forced, progress, blobSize: blob.size, head, downProgress, missing };
      },
      [api.url, tokens, size] as const,
    );
    const expected = createHash('sha256').update(patternBytes(size)).digest('hex');
    expect(result.uploaded).toEqual({ name: 'photo.jpg', size, sha256: expected, note: 'hi' });
    expect(result.forced).toEqual([false, true]);
    expect(hits.filter((h) => h.path === '/upload').map((h) => [h.status, h.sha256])).toEqual([
      [401, undefined],
      [200, expected],
    ]);
    for (let i = 1; i < result.progress.length; i++) expect(result.progress[i].percent).toBeGreaterThanOrEqual(result.progress[i - 1].percent);
    expect(result.progress.at(-1)?.percent).toBe(1);
    expect(result.blobSize).toBe(300_000);
    expect(result.head).toEqual(Array.from(patternBytes(260)));
    expect(result.downProgress.length).toBeGreaterThan(1);
    expect(result.downProgress.at(-1)).toBe(1);
    expect(result.missing).toBe('HTTP_ERROR 404');
  });
});
