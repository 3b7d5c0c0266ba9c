// @vitest-environment node
import { createClient as createBrowserClient } from '../../src/index.js';
import { createClient as createMiniProgramClient } from '../../src/miniprogram.js';
import { createHost } from '../helpers/hosts.js';
import { dedupeGetsSuite } from './dedupe-gets.js';

dedupeGetsSuite('fetch transport (ky) on Node globals', createBrowserClient);
dedupeGetsSuite('mini-program over wx.request', (options) => createMiniProgramClient({ ...options, request: createHost('wx').request }));
dedupeGetsSuite('mini-program over my.request', (options) => createMiniProgramClient({ ...options, request: createHost('my').request }));
