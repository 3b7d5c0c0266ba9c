// @vitest-environment node
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createClient as createBrowserClient } from '../../src/index.js';
import { createClient as createMiniProgramClient } from '../../src/miniprogram.js';
import { createHost } from '../helpers/hosts.js';
import { dedupeGetsSuite } from './dedupe-gets.js';
import { fakeServices, providerFor } from './suite.js';

dedupeGetsSuite('fetch transport (ky) on Node globals', createBrowserClient);
dedupeGetsSuite('mini-program over wx.request', (options) => createMiniProgramClient({ ...options, request: createHost('wx').request }));
dedupeGetsSuite('mini-program over my.request', (options) => createMiniProgramClient({ ...options, request: createHost('my').request }));

describe('dedupeGets (#29 item 4): callers that differ only in raw', () => {
  const start = fakeServices();

  test.each([
    ['the raw caller first', true],
    ['the schema caller first', false],
  ])('%s: each gets its own reading (the bytes; the schema-checked data), never the other one', async (_name, rawFirst) => {
    const service = await start();
    const client = createMiniProgramClient({
      baseUrl: service.url,
      tokenProvider: providerFor(service),
      request: createHost('wx').request,
      dedupeGets: true,
      hostOptions: { responseType: 'arraybuffer' },
    });
    const raw = () => client.get('/slow/30', { raw: true });
    const checked = () => client.get('/slow/30', { schema: z.object({ path: z.string() }) });
    const [first, second] = rawFirst ? [raw(), checked()] : [checked(), raw()];
    const [bytes, data] = rawFirst ? [await first, await second] : [await second, await first];
    expect(bytes).toBeInstanceOf(ArrayBuffer);
    expect(data).toEqual({ path: '/slow/30' });
  });
});
