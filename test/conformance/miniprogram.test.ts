// @vitest-environment node
// The same conformance suite as the fetch transport, over every emulated host.
import { createClient } from '../../src/miniprogram.js';
import { promisesSuite } from './promises.js';
import { conformanceSuite } from './suite.js';
import { createHost, type HostKind } from '../helpers/hosts.js';

const kinds: HostKind[] = ['wx', 'my', 'tt', 'swan', 'qq', 'uni', 'Taro'];

for (const kind of kinds) {
  conformanceSuite(`mini-program over ${kind}.request`, (options) => {
    const host = createHost(kind);
    // Expose the host as its global, as the runtime does, so that `request: tt.request` is recognised.
    (globalThis as Record<string, unknown>)[kind] = host;
    return createClient({ ...options, request: host.request });
  });
}

conformanceSuite('mini-program over wx.request (PC WeChat: 401 in fail, mixed-case headers)', (options) =>
  createClient({ ...options, request: createHost('wx', { http401InFail: true, headerShape: 'mixed' }).request }),
);
conformanceSuite('mini-program over uni.request (HTTP errors in fail, DingTalk array headers)', (options) =>
  createClient({ ...options, request: createHost('uni', { httpErrorsInFail: true, headerShape: 'array' }).request }),
);

promisesSuite('mini-program over wx.request', (options) => createClient({ ...options, request: createHost('wx').request }));
promisesSuite('mini-program over my.request', (options) => createClient({ ...options, request: createHost('my').request }));
