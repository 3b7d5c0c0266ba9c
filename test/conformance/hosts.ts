// The mini-program transports the conformance suite runs over: every host kind, and two hosts with
// the quirks of their platforms. Shared by miniprogram.test.ts and storms.integration.test.ts.
import { HOST_NAMES } from '../../src/transports/miniprogram/host-globals.js';
import { createClient } from '../../src/miniprogram.js';
import { createHost, type HostKind } from '../helpers/hosts.js';
import type { ClientFactory } from './suite.js';

const kinds: HostKind[] = [...HOST_NAMES];

export const hostTransports: Array<[name: string, factory: ClientFactory]> = [
  ...kinds.map((kind): [string, ClientFactory] => [
    `mini-program over ${kind}.request`,
    (options) => {
      const host = createHost(kind);
      // Expose the host as its global, as the runtime does, so that `request: tt.request` is recognised.
      (globalThis as Record<string, unknown>)[kind] = host;
      return createClient({ ...options, request: host.request });
    },
  ]),
  [
    'mini-program over wx.request (PC WeChat: 401 in fail, mixed-case headers)',
    (options) => createClient({ ...options, request: createHost('wx', { http401InFail: true, headerShape: 'mixed' }).request }),
  ],
  [
    'mini-program over uni.request (HTTP errors in fail, DingTalk array headers)',
    (options) => createClient({ ...options, request: createHost('uni', { httpErrorsInFail: true, headerShape: 'array' }).request }),
  ],
];
