// @vitest-environment node
// client.upload()/download() of the browser entry (ky: FormData, Blob) on Node's own fetch, FormData and Blob.
import { describe, expect, test } from 'vitest';
import { createClient } from '../../src/index.js';
import { patternBytes } from '../helpers/fake-service.js';
import { filesSuite } from './files.js';
import { fakeServices, providerFor } from './suite.js';
import { FULL } from '../helpers/tier.js';

filesSuite('fetch transport (ky) on Node globals', (options) => ({
  client: createClient(options),
  source: (bytes, name) => ({ file: new Blob([new Uint8Array(bytes)]), fileName: name }),
  read: async (result) => Buffer.from(await (result as Blob).arrayBuffer()),
}));

describe('browser entry download with raw: true', () => {
  const start = fakeServices();

  // Bound to the wall clock (the headers within 250 ms): the integration tier runs it (test/helpers/tier.ts).
  test.runIf(FULL)(
    "resolves to the 2xx Response at its headers: timeout ends there, the body is the caller's to read at its pace; a 401 still refreshes once, a 404 is an HttpError",
    async () => {
      const service = await start();
      const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), retry: 0 });
      await client.get('/warm');
      service.expireAll();
      const started = Date.now();
      const response = await client.download('/slow-download/20480/25', { raw: true, timeout: 250 });
      expect(response).toBeInstanceOf(Response);
      expect(response.status).toBe(200);
      expect(service.hits.filter((hit) => hit.path.startsWith('/slow-download')).map((hit) => hit.status)).toEqual([401, 200]);
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(bytes.equals(patternBytes(20480))).toBe(true);
      expect(Date.now() - started).toBeGreaterThan(250);
      await expect(client.download('/status/404', { raw: true })).rejects.toMatchObject({ code: 'HTTP_ERROR', status: 404 });
    },
  );
});
