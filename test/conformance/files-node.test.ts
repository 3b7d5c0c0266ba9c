// @vitest-environment node
// client.upload()/download() of the browser entry (ky: FormData, Blob) on Node's own fetch, FormData and Blob.
import { createClient } from '../../src/index.js';
import { filesSuite } from './files.js';

filesSuite('fetch transport (ky) on Node globals', (options) => ({
  client: createClient(options),
  source: (bytes, name) => ({ file: new Blob([new Uint8Array(bytes)]), fileName: name }),
  read: async (result) => Buffer.from(await (result as Blob).arrayBuffer()),
}));
