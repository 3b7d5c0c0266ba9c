// @vitest-environment node
// The fence at every point of a call (issue #29 items 2 and 3), over the browser entry on Node's
// own fetch and Blob, and over the WeChat and Alipay host emulations (files on disk).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createClient as createBrowserClient } from '../../src/index.js';
import { createClient as createMiniProgramClient } from '../../src/miniprogram.js';
import { createHost, type HostKind } from '../helpers/hosts.js';
import { fencesSuite } from './fences.js';

const dir = mkdtempSync(join(tmpdir(), 'channel-sdk-fences-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let written = 0;

fencesSuite('fetch transport (ky) on Node globals', (options) => ({
  client: createBrowserClient(options),
  source: (bytes, name) => ({ file: new Blob([new Uint8Array(bytes)]), fileName: name }),
  read: async (result) => Buffer.from(await (result as Blob).arrayBuffer()),
}));

for (const kind of ['wx', 'my'] as HostKind[]) {
  fencesSuite(`mini-program over ${kind}`, (options) => {
    const host = createHost(kind);
    // Exposed as its global, as the runtime does: Alipay's uploadFile is recognised by it (fileType).
    (globalThis as Record<string, unknown>)[kind] = host;
    const client = createMiniProgramClient({ ...options, request: host.request, uploadFile: host.uploadFile, downloadFile: host.downloadFile });
    return {
      client,
      source: (bytes: Buffer, name: string) => {
        const path = join(dir, ++written + '-' + name);
        writeFileSync(path, bytes);
        return { filePath: path };
      },
      read: async () => Buffer.alloc(0),
    };
  });
}
