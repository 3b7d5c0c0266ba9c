import { createClient } from '../../src/index.js';
import { conformanceSuite } from './suite.js';

conformanceSuite('fetch transport (ky)', createClient);
import { promisesSuite } from './promises.js';

promisesSuite('fetch transport (ky)', createClient);
