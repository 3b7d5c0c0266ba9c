import { createClient } from '../../src/index.js';
import { conformanceSuite } from './suite.js';

conformanceSuite('fetch transport (ky)', createClient);
