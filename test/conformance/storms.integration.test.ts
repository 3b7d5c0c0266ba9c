// The conformance suite's storm full-size (test/helpers/tier.ts): 200 calls at once, half of them
// POSTs, on an expired token cost one forced refresh, over fetch and every emulated host. npm test
// runs the same test with 40 (suite.ts).
import { createClient } from '../../src/index.js';
import { FULL } from '../helpers/tier.js';
import { hostTransports } from './hosts.js';
import { stormSuite } from './suite.js';

if (!FULL) throw new Error('storms.integration.test.ts runs in the integration tier (CHANNEL_TEST_FULL=1)');
stormSuite('fetch transport (ky) on Node globals', createClient);
for (const [name, factory] of hostTransports) stormSuite(name, factory);
