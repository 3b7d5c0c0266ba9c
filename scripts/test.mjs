// `npm test`: the fast tier a contributor runs after every edit (about 90 s on 2 cores, busy or
// not: CONTRIBUTING "Which tier a test is in"): the type check, lint and format check, then the unit and
// conformance tests over the emulated transports, from the source (no build, browser, Redis or
// child process). `npm run verify` runs everything else; CI runs both (CONTRIBUTING "Test tiers").
import { pathToFileURL } from 'node:url';
import { runStages, vitestSummary } from './stages.mjs';

// All four at once: the tests wait on timers and sockets more than they use the CPU, so the
// checks fit alongside them, and vitest runs 4 workers on 2 cores (package.json test:fast).
export const fastStages = [
  {
    parallel: [
      { name: 'test:fast', what: 'vitest, the fast tier (projects client and node)', summary: vitestSummary },
      { name: 'typecheck', what: 'TypeScript 7, and the mini-program sources against ES2015 + the WeChat typings' },
      { name: 'lint', what: 'oxlint, import cycles included' },
      { name: 'format:check', what: 'prettier --check: one formatter for every source file' },
    ],
  },
];

if (import.meta.url === pathToFileURL(process.argv[1]).href) await runStages('npm test', fastStages);
