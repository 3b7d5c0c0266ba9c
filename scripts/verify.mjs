// `npm run verify`: the whole suite, what CI runs (.ci/run: `npm test`, then `npm run verify --
// --after-test`, which skips the fast tier npm test just ran). It builds once and packs once: every
// later stage reuses dist/ (scripts/ensure-build.mjs finds it current) and the tarball (TARBALL).
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { runStages, vitestSummary } from './stages.mjs';
import { fastStages } from './test.mjs';

const { version } = JSON.parse(readFileSync('package.json', 'utf8'));
const packDir = '.tmp/pack';
rmSync(packDir, { recursive: true, force: true });
mkdirSync(packDir, { recursive: true });
const tarball = resolve(packDir, `channel-sdk-${version}.tgz`);
const withTarball = { TARBALL: tarball };
const sizeTable = (output) => output.split('\n').filter((line) => line.startsWith('|'));

const stages = [
  ...(process.argv.includes('--after-test') ? [] : fastStages),
  { name: 'build', what: 'rollup and the WeChat bundle, once for every stage below' },
  // --ignore-scripts: prepack would build again.
  {
    name: 'pack',
    what: 'npm pack, once: the tarball the later stages install',
    command: ['npm', 'pack', '--ignore-scripts', '--silent', '--pack-destination', packDir],
  },
  { name: 'typecheck:examples', what: 'the backend recipes and type tests against the build, TypeScript 7 and 5.9' },
  { name: 'test:integration', what: 'vitest, the integration tier: Chromium, redis-server, frameworks, processes, dist/', summary: vitestSummary },
  { name: 'size', what: 'size budgets', summary: sizeTable },
  { name: 'check:package', what: 'publint --strict, arethetypeswrong on the tarball', env: withTarball },
  { name: 'test:model', what: 'the model-based test, 2 x 2,000 random interleavings', summary: vitestSummary },
  { name: 'test:cluster', what: 'a real 3-master Redis Cluster under several backend processes', summary: vitestSummary },
  { name: 'test:valkey', what: 'the Redis tests again on Valkey: single node, then the cluster' },
  { name: 'test:frameworks', what: 'the Next.js recipes: a real next build and next start', summary: vitestSummary },
  {
    name: 'test:consumers',
    what: 'the tarball through the tools users run (WeChat packNpm, Taro, uni-app, webpack, Jest, yarn, tsc, Node 22/24)',
    env: withTarball,
  },
  { name: 'test:examples', what: "the README's examples in fresh projects, as a reader runs them", env: withTarball },
];

await runStages('npm run verify', stages);
if (!readdirSync(packDir).length) throw new Error('no tarball in ' + packDir);
