// @vitest-environment node
// The same conformance suite as the fetch transport, over every emulated host.
import { createClient } from '../../src/miniprogram.js';
import { promisesSuite } from './promises.js';
import { conformanceSuite } from './suite.js';
import { createHost } from '../helpers/hosts.js';
import { hostTransports } from './hosts.js';

for (const [name, factory] of hostTransports) conformanceSuite(name, factory);

promisesSuite('mini-program over wx.request', (options) => createClient({ ...options, request: createHost('wx').request }));
promisesSuite('mini-program over my.request', (options) => createClient({ ...options, request: createHost('my').request }));
