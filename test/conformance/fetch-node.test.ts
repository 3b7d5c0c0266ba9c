// @vitest-environment node
// The browser entry on Node's own fetch, AbortSignal and timers (Node is one of its runtimes):
// happy-dom's AbortSignal.any listens to any signal-like object, Node's (and a browser's)
// does not, which hid that a createCancelToken() signal never reached ky.
import { createClient } from '../../src/index.js';
import { promisesSuite } from './promises.js';

promisesSuite('fetch transport (ky) on Node globals', createClient);
