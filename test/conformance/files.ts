/**
 * client.upload() and client.download() (issue #22), written once and run over every transport
 * against the fake service over real HTTP: each mini-program host's uploadFile/downloadFile
 * emulation (multipart bodies from files on disk, temp files, progress, abort()) and the
 * browser entry's ky transport (FormData, Blob) on Node. Rules 1-12 of API.md hold for files:
 * the token, one shared refresh and one replay of the file, the logout fence at every await,
 * abort, timeout, and a download never resolves to a 401/5xx body.
 */
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import type { Client } from '../../src/core/client.js';
import { createCancelToken } from '../../src/core/cancel.js';
import type { CoreClientOptions, Progress } from '../../src/core/types.js';
import { AbortError, ConfigError, HttpError, TimeoutError, UnauthorizedError } from '../../src/errors/index.js';
import { patternBytes, type UploadedFile } from '../helpers/fake-service.js';
import { eventually } from './app-life.js';
import { fakeServices, providerFor } from './suite.js';
import { sized } from '../helpers/tier.js';

/** What a transport needs for files: how a file is given to upload(), how a download is read back. */
export interface FileHarness {
  client: Client;
  /** upload() options naming a file with these bytes: `{ filePath }` or `{ file: Blob }`. */
  source(bytes: Buffer, name: string): Record<string, unknown>;
  /** The bytes a download() result holds. */
  read(result: unknown): Promise<Buffer>;
  /** The host task's abort() count, where there is a host. */
  aborted?(): number;
}

export type FileClientFactory = (options: CoreClientOptions) => FileHarness;

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
type Uploaded = { path: string; fields: Record<string, string>; files: UploadedFile[] };
const upload = (h: FileHarness, path: string, options: Record<string, unknown>) =>
  (h.client.upload as (p: string, o: object) => Promise<unknown>)(path, options);
const download = (h: FileHarness, path: string, options: Record<string, unknown> = {}) =>
  (h.client.download as (p: string, o: object) => Promise<unknown>)(path, options);

/** Progress as the caller saw it: ky's shape, percent never decreasing, the last one exactly 1. */
function expectProgress(seen: Progress[], bytes?: number) {
  expect(seen.length).toBeGreaterThan(0);
  for (const p of seen) expect(Object.keys(p).toSorted()).toEqual(['percent', 'totalBytes', 'transferredBytes']);
  for (let i = 1; i < seen.length; i++) expect(seen[i].percent).toBeGreaterThanOrEqual(seen[i - 1].percent);
  expect(seen.at(-1)?.percent).toBe(1);
  expect(seen.filter((p) => p.percent === 1)).toHaveLength(1);
  expect(seen.at(-1)?.transferredBytes).toBeGreaterThanOrEqual(bytes ?? 0);
}

export function filesSuite(name: string, make: FileClientFactory): void {
  describe(`files (#22): ${name}`, () => {
    const start = fakeServices();

    test('upload: Bearer from the provider, a multipart body the server parses (bytes, field, formData), the envelope data through a schema', async () => {
      const service = await start();
      const h = make({ baseUrl: service.url, tokenProvider: providerFor(service), headers: { 'x-app': 'demo' } });
      const bytes = patternBytes(150_000);
      const schema = z.object({
        path: z.string(),
        fields: z.record(z.string(), z.string()),
        files: z.array(z.object({ field: z.string(), size: z.number(), sha256: z.string() })),
      });
      const data = await upload(h, '/upload/photo', {
        ...h.source(bytes, 'photo.jpg'),
        name: 'file',
        formData: { orderNo: 'SO1', n: 2, ok: true },
        searchParams: { v: 1 },
        headers: { 'x-req': 'r1' },
        schema,
      });
      expect(data).toMatchObject({ path: '/upload/photo?v=1', fields: { orderNo: 'SO1', n: '2', ok: 'true' } });
      expect((data as Uploaded).files).toMatchObject([{ field: 'file', size: bytes.length, sha256: sha256(bytes) }]);
      const [hit] = service.hits;
      expect(hit.method).toBe('POST');
      expect(hit.token).toBe(service.issued[0]);
      expect(hit.headers['x-app']).toBe('demo');
      expect(hit.headers['x-req']).toBe('r1');
      expect(String(hit.headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
    });

    test('upload: a 401 forces one refresh and sends the same file once more; a second 401 is UnauthorizedError + auth:failed', async () => {
      const service = await start();
      const provider = providerFor(service);
      const h = make({ baseUrl: service.url, tokenProvider: provider });
      await h.client.get('/warm');
      service.expireAll();
      const bytes = patternBytes(70_000);
      const data = (await upload(h, '/upload', { ...h.source(bytes, 'a.bin'), name: 'doc', formData: { k: 'v' } })) as Uploaded;
      expect(data.files[0].sha256).toBe(sha256(bytes));
      const uploads = service.hits.filter((hit) => hit.path === '/upload');
      expect(uploads.map((hit) => hit.status)).toEqual([401, 200]);
      expect(uploads[1].token).toBe(service.issued[1]);
      expect(provider.calls.map((c) => c.forceRefresh)).toEqual([false, true]);

      const failed: unknown[] = [];
      h.client.on('auth:failed', (e) => failed.push(e));
      service.rejectAll(true);
      const error = await upload(h, '/upload', { ...h.source(bytes, 'a.bin'), name: 'doc' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnauthorizedError);
      expect(service.hits.filter((hit) => hit.path === '/upload')).toHaveLength(4);
      expect(failed).toHaveLength(1);
    });

    test('download: the bytes and statusCode; a 401 (on a download too) refreshes once and downloads again', async () => {
      const service = await start();
      const provider = providerFor(service);
      const h = make({ baseUrl: service.url, tokenProvider: provider });
      const first = await download(h, '/download/100000');
      expect(sha256(await h.read(first))).toBe(sha256(patternBytes(100_000)));
      service.expireAll();
      const again = await download(h, '/download/5000', { searchParams: { name: 'a b' } });
      expect((await h.read(again)).equals(patternBytes(5000))).toBe(true);
      expect(service.hits.map((hit) => [hit.path, hit.status])).toEqual([
        ['/download/100000', 200],
        ['/download/5000?name=a%20b', 401],
        ['/download/5000?name=a%20b', 200],
      ]);
      expect(provider.forced()).toBe(1);
    });

    test('download: a 404, 500 or second 401 is an error, never handed over as the file', async () => {
      const service = await start();
      const h = make({ baseUrl: service.url, tokenProvider: providerFor(service), retry: 0 });
      await expect(download(h, '/status/404')).rejects.toMatchObject({ code: 'HTTP_ERROR', status: 404 });
      await expect(download(h, '/status/500')).rejects.toBeInstanceOf(HttpError);
      service.rejectAll(true);
      await expect(download(h, '/download/10')).rejects.toBeInstanceOf(UnauthorizedError);
    });

    test('download: a second 401 is UnauthorizedError and one auth:failed, the error body never handed over', async () => {
      const service = await start();
      const h = make({ baseUrl: service.url, tokenProvider: providerFor(service) });
      const failed: Array<{ method: string; url: string }> = [];
      h.client.on('auth:failed', (e) => failed.push(e));
      const seen: Progress[] = [];
      service.rejectAll(true);
      const error = await download(h, '/download/4000', { onProgress: (p: Progress) => seen.push(p) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnauthorizedError);
      expect(JSON.stringify(error)).not.toMatch(/tempFilePath|tmp_/);
      expect(failed).toMatchObject([{ method: 'GET', url: service.url + '/download/4000' }]);
      expect(service.hits.map((hit) => hit.status)).toEqual([401, 401]);
      // Whatever arrived of the 401 bodies, the caller was never told the download completed.
      expect(seen.filter((p) => p.percent === 1)).toHaveLength(0);
    });

    test('no progress reaches the caller once the call is aborted (its signal, or clearToken() with none), and the transfer is dropped', async () => {
      const service = await start();
      const h = make({ baseUrl: service.url, tokenProvider: providerFor(service) });
      const bytes = patternBytes(4_000_000);
      const controller = new AbortController();
      let afterAbort = 0;
      let aborted = false;
      const up = upload(h, '/upload', {
        ...h.source(bytes, 'huge.bin'),
        name: 'file',
        signal: controller.signal,
        onProgress: () => {
          if (aborted) afterAbort++;
          else if (!aborted) {
            aborted = true;
            controller.abort();
          }
        },
      });
      await expect(up).rejects.toBeInstanceOf(AbortError);
      // clearToken() while a download is on the wire, with no signal of the caller's.
      let loggedOut = false;
      const down = download(h, '/slow-download/300000/3', {
        onProgress: (p: Progress) => {
          if (loggedOut) afterAbort++;
          else if (p.transferredBytes > 0) {
            loggedOut = true;
            h.client.clearToken();
          }
        },
      });
      const error = await down.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AbortError);
      expect((error as Error).message).toMatch(/clearToken\(\) ran while this request was under way/);
      await tick(300);
      expect(afterAbort).toBe(0);
      // Where there is a host, both tasks were aborted through task.abort().
      expect(h.aborted ? h.aborted() : 2).toBe(2);
      expect(service.hits.filter((hit) => hit.path === '/upload')).toHaveLength(0);
    });

    test('onProgress: ky shape { percent, transferredBytes, totalBytes }, non-decreasing, one final 1, for upload and download', async () => {
      const service = await start();
      const h = make({ baseUrl: service.url, tokenProvider: providerFor(service) });
      const up: Progress[] = [];
      const bytes = patternBytes(300_000);
      await upload(h, '/upload', { ...h.source(bytes, 'big.bin'), name: 'file', onProgress: (p: Progress) => up.push(p) });
      expectProgress(up, bytes.length);
      const down: Progress[] = [];
      await download(h, '/download/200000', { onProgress: (p: Progress) => down.push(p) });
      expectProgress(down, 200_000);
      expect(down.length).toBeGreaterThan(1);
    });

    test("a download after expiry: progress follows the replay's file, never the 401's body", async () => {
      const service = await start();
      const h = make({ baseUrl: service.url, tokenProvider: providerFor(service) });
      await h.client.get('/warm');
      service.expireAll();
      const seen: Progress[] = [];
      const result = await download(h, '/download/300000', { onProgress: (p: Progress) => seen.push(p) });
      expect((await h.read(result)).equals(patternBytes(300_000))).toBe(true);
      expect(service.hits.filter((hit) => hit.path === '/download/300000').map((hit) => hit.status)).toEqual([401, 200]);
      expectProgress(seen, 300_000);
      // The 401's small body never showed as a finished transfer: the replay's chunks did.
      expect(seen.slice(0, -1).every((p) => p.percent < 1 && p.totalBytes === 300_000)).toBe(true);
      expect(seen.length).toBeGreaterThan(1);
    });

    test('onProgress stays non-decreasing across the replay after a 401, and a throwing listener fails nothing', async () => {
      const service = await start();
      const h = make({ baseUrl: service.url, tokenProvider: providerFor(service) });
      await h.client.get('/warm');
      service.expireAll();
      const seen: Progress[] = [];
      const bytes = patternBytes(200_000);
      const uncaught: unknown[] = [];
      const onError = (e: unknown) => uncaught.push(e);
      process.on('uncaughtException', onError);
      try {
        await upload(h, '/upload', {
          ...h.source(bytes, 'x.bin'),
          name: 'file',
          onProgress: (p: Progress) => {
            seen.push(p);
            if (seen.length === 1) throw new Error('listener bug (provoked by the test)');
          },
        });
        await tick(20);
      } finally {
        process.off('uncaughtException', onError);
      }
      expectProgress(seen);
      expect(service.hits.filter((hit) => hit.path === '/upload').map((hit) => hit.status)).toEqual([401, 200]);
    });

    test('one refresh for a storm of mixed requests, uploads and downloads on an expired token', async () => {
      const service = await start();
      const provider = providerFor(service, 5);
      const h = make({ baseUrl: service.url, tokenProvider: provider, retry: { delay: () => 1 } });
      await h.client.get('/warm');
      service.expireAll();
      const bytes = patternBytes(20_000);
      // A storm (test/helpers/tier.ts): 72 calls at once in the integration tier, 24 in npm test, where
      // 72 on a busy machine outlast the default 10-s timeout of an attempt.
      const [gets, posts, uploads, downloads] = [sized(30, 10), sized(15, 5), sized(15, 5), sized(12, 4)];
      const results = await Promise.all([
        ...Array.from({ length: gets }, (_, i) => h.client.get('/g/' + i)),
        ...Array.from({ length: posts }, (_, i) => h.client.post('/p/' + i, { json: { i } })),
        ...Array.from({ length: uploads }, (_, i) => upload(h, '/upload/' + i, { ...h.source(bytes, i + '.bin'), name: 'file', formData: { i: String(i) } })),
        ...Array.from({ length: downloads }, () => download(h, '/download/3000')),
      ]);
      expect(provider.forced()).toBe(1);
      expect(provider.calls).toHaveLength(2);
      const uploaded = results.slice(gets + posts, gets + posts + uploads) as Uploaded[];
      expect(uploaded.map((u) => [u.fields.i, u.files[0].sha256])).toEqual(Array.from({ length: uploads }, (_, i) => [String(i), sha256(bytes)]));
      for (const result of results.slice(gets + posts + uploads)) expect((await h.read(result)).equals(patternBytes(3000))).toBe(true);
      for (const hit of service.hits.filter((x) => x.status === 200 && x.path !== '/warm')) expect(hit.token).toBe(service.issued[1]);
    });

    test('abort mid-transfer: AbortError, the transfer is dropped, never resolved; before the start nothing is sent', async () => {
      const service = await start();
      const h = make({ baseUrl: service.url, tokenProvider: providerFor(service) });
      const cancel = createCancelToken();
      const bytes = patternBytes(4_000_000);
      const pending = upload(h, '/upload', {
        ...h.source(bytes, 'huge.bin'),
        name: 'file',
        signal: cancel.signal,
        onProgress: (p: Progress) => p.percent > 0 && p.percent < 1 && cancel.cancel('user left'),
      });
      const error = await pending.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AbortError);
      expect((error as AbortError).cause).toBe('user left');
      const controller = new AbortController();
      const slow = download(h, '/slow-download/200000/5', {
        signal: controller.signal,
        onProgress: (p: Progress) => p.transferredBytes > 0 && controller.abort(),
      });
      await expect(slow).rejects.toBeInstanceOf(AbortError);
      // Where there is a host, both tasks were aborted through task.abort().
      expect(h.aborted ? h.aborted() : 2).toBe(2);
      await tick(100);
      expect(service.hits.filter((hit) => hit.path === '/upload')).toHaveLength(0);
      const before = createCancelToken();
      before.cancel();
      await expect(upload(h, '/upload', { ...h.source(bytes, 'x'), name: 'file', signal: before.signal })).rejects.toBeInstanceOf(AbortError);
    });

    test('a slow download ends with TimeoutError within timeout, its file never handed over', async () => {
      const service = await start();
      const h = make({ baseUrl: service.url, tokenProvider: providerFor(service), retry: 0 });
      const error = await download(h, '/slow-download/100000/20', { timeout: 300 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TimeoutError);
    });

    describe('logout (clearToken) at every await of a file call: AbortError, never sent again with any token', () => {
      test('while waiting for the token', async () => {
        const service = await start();
        let release: (token: string) => void = () => {};
        const h = make({ baseUrl: service.url, tokenProvider: () => new Promise<string>((resolve) => (release = resolve)) });
        const pending = upload(h, '/upload', { ...h.source(patternBytes(10), 'a'), name: 'file' }).catch((e: unknown) => e);
        const waiting = download(h, '/download/10').catch((e: unknown) => e);
        await tick(10);
        h.client.clearToken();
        release(service.issue('alice'));
        expect(await pending).toBeInstanceOf(AbortError);
        expect(await waiting).toBeInstanceOf(AbortError);
        await tick(50);
        expect(service.hits).toHaveLength(0);
      });

      test('on the wire: the upload is not replayed after its 401, with the next user token', async () => {
        const service = await start();
        let user = 'alice';
        const h = make({ baseUrl: service.url, tokenProvider: () => service.issue(user) });
        await h.client.get('/warm');
        service.expireAll();
        const seen: Progress[] = [];
        const pending = upload(h, '/upload', {
          ...h.source(patternBytes(3_000_000), 'big'),
          name: 'file',
          onProgress: (p: Progress) => {
            seen.push(p);
            if (seen.length === 1) {
              h.client.clearToken();
              user = 'bob';
            }
          },
        }).catch((e: unknown) => e);
        const error = await pending;
        expect(error).toBeInstanceOf(AbortError);
        expect((error as Error).message).toMatch(/clearToken\(\) ran while this request was under way/);
        await tick(200);
        expect(service.hits.filter((hit) => hit.path === '/upload').length).toBeLessThanOrEqual(1);
        expect(service.issued).toHaveLength(1);
      });

      test('while waiting for the forced refresh after a 401, and in the backoff of a download', async () => {
        const service = await start();
        let slow = false;
        let asked = 0;
        const h = make({
          baseUrl: service.url,
          tokenProvider: async () => (asked++, slow && (await tick(200)), service.issue()),
          retry: { delay: () => 60_000 },
        });
        let retries = 0;
        h.client.on('retry', (e) => void (e.url.endsWith('/flaky/5') && retries++));
        await h.client.get('/warm');
        service.expireAll();
        slow = true;
        const refreshing = upload(h, '/upload', { ...h.source(patternBytes(1000), 'a'), name: 'file' }).catch((e: unknown) => e);
        // The moment itself, not a guess at how long it takes to come (a busy machine): the upload's
        // 401 is in and the forced refresh asked for, its provider call under way.
        await eventually(() => asked === 2, 'the forced refresh after the 401');
        h.client.clearToken();
        expect(await refreshing).toBeInstanceOf(AbortError);
        slow = false;
        await h.client.get('/warm2');
        const backoff = download(h, '/flaky/5').catch((e: unknown) => e);
        await eventually(() => retries === 1, "the download's backoff after its 503");
        h.client.clearToken();
        expect(await backoff).toBeInstanceOf(AbortError);
        await tick(50);
        expect(service.hits.filter((hit) => hit.path === '/upload').map((hit) => hit.status)).toEqual([401]);
        expect(service.hits.filter((hit) => hit.path === '/flaky/5')).toHaveLength(1);
      });
    });

    test('bad options are ConfigErrors naming the fix, before a token is asked for or anything is sent', async () => {
      const service = await start();
      let provided = 0;
      const h = make({ baseUrl: service.url, tokenProvider: () => (provided++, service.issue()) });
      const file = h.source(patternBytes(10), 'a');
      const cases: Array<[Promise<unknown>, RegExp]> = [
        [upload(h, '/upload', { ...file }), /name must be the multipart field name/],
        [upload(h, '/upload', { name: 'file' }), /(filePath must be the local path|file must be a Blob or File)/],
        [upload(h, '/upload', { ...file, name: 'file', formData: { a: { nested: true } } }), /formData\.a must be a string, number or boolean/],
        [upload(h, '/upload', { ...file, name: 'file', headers: { 'Content-Type': 'application/json' } }), /content-type is set by the upload itself/],
        [upload(h, '/upload', { ...file, name: 'file', onUploadProgress: () => {} }), /unknown upload option "onUploadProgress"; did you mean "onProgress"\?/],
        [upload(h, '/upload', { ...file, name: 'file', onProgress: 'yes' }), /onProgress must be a function/],
        [download(h, '/download/1', { json: {} }), /unknown download option "json"/],
        [download(h, '/download/1', { cancelToken: {} }), /unknown download option "cancelToken"; did you mean "signal"\?/],
        [download(h, '/download/1', { progress: () => {} }), /unknown download option "progress"; did you mean "onProgress"\?/],
        [upload(h, '/upload', { ...file, name: 'file', header: {} }), /unknown upload option "header"; did you mean "headers"\?/],
        [h.client.get('/x', { cancelToken: {} } as never), /unknown request option "cancelToken"; did you mean "signal"\?/],
        [(h.client.upload as (p: string) => Promise<unknown>)('/upload'), /upload options must be an object/],
      ];
      for (const [pending, message] of cases) {
        const error = await pending.catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as Error).message).toMatch(message);
      }
      expect(provided).toBe(0);
      expect(service.hits).toHaveLength(0);
    });
  });
}
