// hostOptions (issue #22 item 3): the host's own options pass through, per client and per call,
// checked against the host's list for that API; an unknown key is a ConfigError with "did you mean".
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, test } from 'vitest';
import { createClient as createBrowserClient } from '../../../src/index.js';
import { ConfigError, createClient } from '../../../src/miniprogram.js';
import { HOST_NAMES } from '../../../src/transports/miniprogram/host-globals.js';
import { providerFor } from '../../conformance/suite.js';
import { patternBytes, startFakeService, type FakeService } from '../../helpers/fake-service.js';
import { createHost, type HostKind } from '../../helpers/hosts.js';

const dir = mkdtempSync(join(tmpdir(), 'channel-sdk-host-options-'));
const file = join(dir, 'a.jpg');
writeFileSync(file, patternBytes(100));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let service: FakeService;
afterEach(async () => {
  await service?.close();
  for (const kind of HOST_NAMES) delete (globalThis as Record<string, unknown>)[kind];
});
async function setup(kind: HostKind, hostOptions?: Record<string, unknown>) {
  service = await startFakeService();
  const host = createHost(kind);
  (globalThis as Record<string, unknown>)[kind] = host;
  const client = createClient({
    baseUrl: service.url,
    tokenProvider: providerFor(service),
    request: host.request,
    uploadFile: host.uploadFile,
    downloadFile: host.downloadFile,
    ...(hostOptions ? { hostOptions } : {}),
  });
  return { host, client };
}

test("the client's hostOptions reach each API that takes them; a call's own are added", async () => {
  const { host, client } = await setup('wx', { enableHttp2: true, enableCache: true });
  await client.get('/x', { hostOptions: { enableQuic: true } });
  await client.upload('/upload', { filePath: file, name: 'file', hostOptions: { enableProfile: false } });
  await client.download('/download/5');
  expect(host.calls[0]).toMatchObject({ enableHttp2: true, enableCache: true, enableQuic: true, dataType: 'text' });
  // enableCache is request()'s only: not handed to uploadFile / downloadFile.
  expect(host.uploads[0]).toMatchObject({ enableHttp2: true, enableProfile: false });
  expect(host.uploads[0].enableCache).toBeUndefined();
  expect(host.downloads[0]).toMatchObject({ enableHttp2: true });
  expect(host.downloads[0].enableCache).toBeUndefined();
});

test('an unknown key is a ConfigError with "did you mean", per host and per API; the SDK\'s own keys say which option to use', async () => {
  const { client } = await setup('wx');
  expect(() => createClient({ baseUrl: service.url, tokenProvider: () => '', request: createHost('wx').request, hostOptions: { enableHttp3: true } })).toThrow(
    /unknown hostOptions key "enableHttp3"; did you mean "enableHttp2"\?/,
  );
  await expect(client.get('/x', { hostOptions: { enableCach: true } })).rejects.toThrow(
    /unknown wx hostOptions key "enableCach"; did you mean "enableCache"\?/,
  );
  await expect(client.upload('/upload', { filePath: file, name: 'file', hostOptions: { enableCache: true } })).rejects.toThrow(ConfigError);
  await expect(client.get('/x', { hostOptions: { header: {} } })).rejects.toThrow(/hostOptions\.header is set by channel-sdk; use headers instead/);
  await expect(client.get('/x', { hostOptions: { success: () => {} } })).rejects.toThrow(/is set by channel-sdk; use the returned promise/);
  await expect(client.get('/x', { hostOptions: 'http2' as never })).rejects.toThrow(/hostOptions must be an object/);
  expect(service.hits).toHaveLength(0);
});

test("each host's list: Douyin's dataType is json or string; Alipay's upload takes fileType; uni's request takes sslVerify", async () => {
  const tt = await setup('tt');
  await expect(tt.client.get('/x', { hostOptions: { dataType: 'text' } })).rejects.toThrow(/dataType must be one of "json", "string" on tt/);
  await expect(tt.client.get('/x', { hostOptions: { enableHttp2: true } })).rejects.toThrow(/unknown tt hostOptions key "enableHttp2"/);
  await service.close();
  const my = await setup('my');
  await my.client.upload('/upload', { filePath: file, name: 'file', hostOptions: { fileType: 'image', hideLoading: true } });
  expect(my.host.uploads[0]).toMatchObject({ fileType: 'image', hideLoading: true });
  await expect(my.client.download('/download/1', { hostOptions: { fileType: 'image' } })).rejects.toThrow(
    /my's download takes no options beyond what channel-sdk sets/,
  );
  await service.close();
  const uni = await setup('uni', { sslVerify: false });
  await uni.client.get('/x');
  expect(uni.host.calls[0].sslVerify).toBe(false);
});

test("responseType 'arraybuffer' passes through: the envelope is still read, and with raw: true the call resolves to the bytes", async () => {
  const { host, client } = await setup('wx');
  await expect(client.get('/x', { hostOptions: { responseType: 'arraybuffer' } })).resolves.toMatchObject({ path: '/x' });
  expect(host.calls[0].responseType).toBe('arraybuffer');
  const bytes = await client.get('/plain', { raw: true, hostOptions: { responseType: 'arraybuffer' } });
  expect(bytes).toBeInstanceOf(ArrayBuffer);
  expect(Buffer.from(bytes as ArrayBuffer).toString()).toBe('{"hello":"world"}');
});

test('the browser entry has no host: hostOptions there is an unknown option', async () => {
  service = await startFakeService();
  const client = createBrowserClient({ baseUrl: service.url, tokenProvider: providerFor(service) });
  await expect(client.get('/x', { hostOptions: {} } as never)).rejects.toThrow(/unknown request option "hostOptions"/);
  expect(() => createBrowserClient({ baseUrl: service.url, tokenProvider: () => '', hostOptions: {} } as never)).toThrow(/unknown option "hostOptions"/);
});
