// client.upload()/download() over every host's emulated uploadFile/downloadFile (real HTTP,
// files on disk), then what only mini-programs have: per-API concurrency limits, hosts that
// misbehave, Alipay's fileName/fileType and status-less downloads, uploadFile detection.
import { HOST_NAMES } from '../../../src/transports/miniprogram/host-globals.js';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, test } from 'vitest';
import { AbortError, createClient, type DownloadResult } from '../../../src/miniprogram.js';
import { filesSuite } from '../../conformance/files.js';
import { providerFor } from '../../conformance/suite.js';
import { patternBytes, startFakeService, type FakeService } from '../../helpers/fake-service.js';
import { createHost, type HostKind, type HostQuirks } from '../../helpers/hosts.js';

const dir = mkdtempSync(join(tmpdir(), 'channel-sdk-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let written = 0;
/** A local file as a host's chooseMedia would give: bytes on disk, named by its path. */
function localFile(bytes: Buffer, name: string): string {
  const path = join(dir, ++written + '-' + name.replace(/[^\w.]/g, '_'));
  writeFileSync(path, bytes);
  return path;
}

function harness(kind: HostKind, quirks: HostQuirks = {}) {
  return (options: Parameters<typeof createClient>[0]) => {
    const host = createHost(kind, quirks);
    // Exposed as its global, as the runtime does, so that `request: tt.request` is recognised.
    (globalThis as Record<string, unknown>)[kind] = host;
    const client = createClient({ ...options, request: host.request, uploadFile: host.uploadFile, downloadFile: host.downloadFile });
    return {
      client,
      source: (bytes: Buffer, name: string) => ({ filePath: localFile(bytes, name) }),
      read: async (result: unknown) => readFileSync((result as DownloadResult).tempFilePath),
      aborted: () => host.aborted,
    };
  };
}

const kinds: HostKind[] = [...HOST_NAMES];
for (const kind of kinds) filesSuite(`mini-program over ${kind}.uploadFile / ${kind}.downloadFile`, harness(kind));
filesSuite('mini-program over uni (HTTP errors in fail, DingTalk array headers)', harness('uni', { httpErrorsInFail: true, headerShape: 'array' }));

describe('mini-program files: host specifics', () => {
  let service: FakeService;
  // The suites above leave their host as a global; each test here sets only its own.
  beforeEach(() => {
    for (const kind of kinds) delete (globalThis as Record<string, unknown>)[kind];
  });
  afterEach(async () => {
    await service?.close();
    for (const kind of kinds) delete (globalThis as Record<string, unknown>)[kind];
  });
  const setup = async (kind: HostKind = 'wx', quirks: HostQuirks = {}, options: object = {}) => {
    service = await startFakeService();
    const host = createHost(kind, quirks);
    (globalThis as Record<string, unknown>)[kind] = host;
    const client = createClient({
      baseUrl: service.url,
      tokenProvider: providerFor(service),
      request: host.request,
      uploadFile: host.uploadFile,
      downloadFile: host.downloadFile,
      retry: { delay: () => 1 },
      ...options,
    });
    return { host, client };
  };

  test('what WeChat is handed: url, filePath, name, formData as strings, header and headers with the Bearer, the timeout uncapped', async () => {
    const { host, client } = await setup('wx', {}, { timeout: 120_000 });
    const filePath = localFile(patternBytes(10), 'a.jpg');
    await client.upload('/upload', { filePath, name: 'file', formData: { n: 1 } });
    const sent = host.uploads[0];
    expect(sent).toMatchObject({ url: service.url + '/upload', filePath, name: 'file', formData: { n: '1' }, timeout: 120_000 });
    expect(sent.header.authorization).toBe('Bearer ' + service.issued[0]);
    expect(sent.header['content-type']).toBeUndefined();
    expect(sent.fileName).toBeUndefined();
    await client.download('/download/3', { filePath: join(dir, 'saved.bin') });
    expect(host.downloads[0]).toMatchObject({ url: service.url + '/download/3', filePath: join(dir, 'saved.bin') });
    expect(host.downloads[0].header.accept).toBe('*/*');
  });

  test('download to a filePath resolves to it, the bytes written there', async () => {
    const { client } = await setup();
    const target = join(dir, 'user-file.bin');
    const result = await client.download('/download/777', { filePath: target });
    expect(result).toEqual({ tempFilePath: target, filePath: target, statusCode: 200 });
    expect(readFileSync(target).equals(patternBytes(777))).toBe(true);
  });

  test('Alipay: the field name also as fileName, fileType from the extension (image, video, audio) or hostOptions', async () => {
    const { host, client } = await setup('my');
    for (const [name, type] of [
      ['a.PNG', 'image'],
      ['clip.mp4', 'video'],
      ['voice.m4a', 'audio'],
      ['notes.pdf', 'image'],
    ]) {
      await client.upload('/upload', { filePath: localFile(patternBytes(5), name), name: 'doc' });
      expect(host.uploads.at(-1)).toMatchObject({ name: 'doc', fileName: 'doc', fileType: type });
    }
    await client.upload('/upload', { filePath: localFile(patternBytes(5), 'x.bin'), name: 'doc', hostOptions: { fileType: 'video' } });
    expect(host.uploads.at(-1)?.fileType).toBe('video');
    await expect(client.upload('/upload', { filePath: localFile(patternBytes(5), 'x.bin'), name: 'doc', hostOptions: { fileType: 'pdf' } })).rejects.toThrow(
      /fileType must be one of "image", "video", "audio" on my/,
    );
  });

  test("the body of a 401 or 404 download is removed where the host wrote it (a temp file, or the caller's filePath), never reported", async () => {
    const { host, client } = await setup('wx', {}, { retry: 0 });
    await client.get('/warm');
    service.expireAll();
    const target = join(dir, 'invoice.pdf');
    const saved = await client.download('/download/2048', { filePath: target });
    // The 401's body went to filePath first, was removed, and the replay wrote the file there.
    expect(host.removed).toEqual([target]);
    expect(saved).toEqual({ tempFilePath: target, filePath: target, statusCode: 200 });
    expect(readFileSync(target).equals(patternBytes(2048))).toBe(true);
    // A 404 to filePath: an HttpError, and nothing left there.
    await expect(client.download('/status/404', { filePath: target })).rejects.toMatchObject({ code: 'HTTP_ERROR', status: 404 });
    expect(existsSync(target)).toBe(false);
    // Without filePath: the temp file of a 401 is removed, the replay's is the one handed over.
    service.expireAll();
    const temp = await client.download('/download/100');
    expect(host.removed).toHaveLength(3);
    expect(host.removed[2]).not.toBe(temp.tempFilePath);
    expect(existsSync(host.removed[2])).toBe(false);
    expect(readFileSync(temp.tempFilePath).equals(patternBytes(100))).toBe(true);
  });

  test('Alipay behind uni or Taro: where my exists, the upload gets fileName and a fileType whichever host function is passed', async () => {
    const { host, client } = await setup('Taro');
    (globalThis as Record<string, unknown>).my = createHost('my');
    const alipay = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), request: host.request, uploadFile: host.uploadFile });
    await alipay.upload('/upload', { filePath: localFile(patternBytes(5), 'clip.mov'), name: 'doc', hostOptions: { fileType: 'video' } });
    await alipay.upload('/upload', { filePath: localFile(patternBytes(5), 'scan.png'), name: 'doc' });
    expect(host.uploads.map((u) => [u.fileName, u.fileType])).toEqual([
      ['doc', 'video'],
      ['doc', 'image'],
    ]);
    // Without my (WeChat under Taro), neither is sent.
    delete (globalThis as Record<string, unknown>).my;
    await client.upload('/upload', { filePath: localFile(patternBytes(5), 'scan.png'), name: 'doc' });
    expect(host.uploads[2]).not.toHaveProperty('fileType');
    expect(host.uploads[2]).not.toHaveProperty('fileName');
  });

  test('WeChat queue: clearToken() while 10 uploads are on the wire and 15 wait ends all 25 with AbortError; the waiting ones never reach the host', async () => {
    const { host, client } = await setup('wx');
    const pending = Array.from({ length: 25 }, (_, i) =>
      client.upload('/slow/400', { filePath: localFile(patternBytes(1000), i + '.bin'), name: 'file' }).catch((e: unknown) => e),
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(host.uploads).toHaveLength(10);
    client.clearToken();
    const errors = await Promise.all(pending);
    expect(errors.every((e) => e instanceof AbortError)).toBe(true);
    expect([host.uploads.length, host.aborted]).toEqual([10, 10]);
    await new Promise((r) => setTimeout(r, 500));
    expect(service.hits.filter((hit) => hit.path === '/slow/400' && hit.status === 200).length).toBeLessThanOrEqual(10);
    // Every slot was given back: the next 10 run at once.
    const again = await Promise.all(
      Array.from({ length: 10 }, (_, i) => client.upload('/upload', { filePath: localFile(patternBytes(10), 'n' + i), name: 'file' })),
    );
    expect(again).toHaveLength(10);
    expect(host.maxSeenFiles.upload).toBe(10);
  });

  test('Alipay before base library 2.8.8 (no statusCode in downloadFile): a NetworkError, never an unchecked file', async () => {
    const { client } = await setup('my', { noDownloadStatus: true }, { retry: 0 });
    await expect(client.download('/download/10')).rejects.toThrow(/the host answered success\(\) with something that is not a response \(no HTTP status/);
  });

  test('WeChat allows 10 uploads and 10 downloads at once besides 10 requests: 25 of each all succeed, queued', async () => {
    const { host, client } = await setup('wx');
    const bytes = patternBytes(50_000);
    await Promise.all([
      ...Array.from({ length: 25 }, (_, i) => client.get('/slow/20?i=' + i)),
      ...Array.from({ length: 25 }, (_, i) => client.upload('/upload', { filePath: localFile(bytes, i + '.bin'), name: 'file' })),
      ...Array.from({ length: 25 }, () => client.download('/download/50000')),
    ]);
    expect([host.maxSeen, host.maxSeenFiles.upload, host.maxSeenFiles.download]).toEqual([9, 10, 10]);
  });

  test.each([
    ['success then fail (a duplicate opposite callback)', { doubleCallback: true }],
    ['complete before success', { completeFirst: true }],
  ] as const)('a host that calls %s: one result per transfer, the queue slot released once', async (_label, quirks) => {
    const { client } = await setup('wx', quirks, { concurrency: 1 });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => client.upload('/upload/' + i, { filePath: localFile(patternBytes(100), 'f'), name: 'file' })),
    );
    expect(results.map((r) => (r as { path: string }).path)).toEqual(Array.from({ length: 6 }, (_, i) => '/upload/' + i));
    const downloads = await Promise.all(Array.from({ length: 4 }, () => client.download('/download/64')));
    for (const d of downloads) expect(readFileSync(d.tempFilePath).equals(patternBytes(64))).toBe(true);
    await new Promise((r) => setTimeout(r, 20));
    await expect(client.upload('/upload', { filePath: localFile(patternBytes(1), 'g'), name: 'file' })).resolves.toBeTruthy();
  });

  test('a host that never calls back: the timeout ends the upload and aborts its task', async () => {
    const { host, client } = await setup('wx', { neverCallBack: true }, { retry: 0 });
    await expect(client.upload('/upload', { filePath: localFile(patternBytes(10), 'h'), name: 'file', timeout: 80 })).rejects.toThrow(
      /no response within 80 ms/,
    );
    expect(host.aborted).toBe(1);
  });

  test('a server refusing an oversize upload (413) is an HttpError, not retried (POST); a missing local file is a NetworkError naming it', async () => {
    const { host, client } = await setup('wx');
    await expect(client.upload('/status/413', { filePath: localFile(patternBytes(10), 'i'), name: 'file' })).rejects.toMatchObject({
      code: 'HTTP_ERROR',
      status: 413,
    });
    expect(host.uploads).toHaveLength(1);
    await expect(client.upload('/upload', { filePath: join(dir, 'missing.jpg'), name: 'file' })).rejects.toThrow(
      /uploadFile failed: uploadFile:fail file not found/,
    );
  });

  test('uploadFile and downloadFile are found on the host request came from; a host without them fails at the call, with what to pass', async () => {
    service = await startFakeService();
    const tt = createHost('tt');
    (globalThis as Record<string, unknown>).tt = tt;
    const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service) });
    await client.upload('/upload', { filePath: localFile(patternBytes(3), 'j'), name: 'file' });
    await client.download('/download/3');
    expect([tt.uploads.length, tt.downloads.length]).toEqual([1, 1]);
    const bare = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), request: tt.request, uploadFile: undefined });
    delete (globalThis as Record<string, unknown>).tt;
    await expect(bare.upload('/upload', { filePath: 'x', name: 'file' })).rejects.toThrow(
      /no mini-program uploadFile\(\) found.*pass uploadFile \(e\.g\. uploadFile: wx\.uploadFile\)/,
    );
    expect(() => createClient({ baseUrl: service.url, tokenProvider: () => '', request: tt.request, downloadFile: 'wx.downloadFile' as never })).toThrow(
      /downloadFile must be the host downloadFile function/,
    );
  });
});
