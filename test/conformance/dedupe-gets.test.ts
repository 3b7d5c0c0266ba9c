// @vitest-environment node
import { createClient as createBrowserClient } from '../../src/index.js';
import { createClient as createMiniProgramClient } from '../../src/miniprogram.js';
import { createHost } from '../helpers/hosts.js';
import { sharedGetsSuite } from './dedupe-gets.js';

sharedGetsSuite('fetch transport (ky) on Node globals', createBrowserClient);
sharedGetsSuite('mini-program over wx.request', (options) => createMiniProgramClient({ ...options, request: createHost('wx').request }));
sharedGetsSuite('mini-program over my.request', (options) => createMiniProgramClient({ ...options, request: createHost('my').request }));
