// Size budgets, enforced by `npm test`. Each entry is bundled the way a user's bundler
// would (esbuild, minified) and gzipped. ky, mitt and zod are bundled into the package's
// entries, so every figure is all-in: what a user's app grows by.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { miniprogramBuild } from './build-miniprogram.mjs';

const KB = 1024;
// The enforced budgets sit about 2% above what ships (#31): a rename or a move that shifts gzip by
// a few bytes needs no budget commit, while a feature's growth still fails the suite. Reset after
// #44 (the telemetry plug-in, rooms for the core, one options object) with #42, #45 and #47 in;
// what each change added, and what the plug-in is, are in docs/maintainers/size.md.
const BROWSER_ALL_IN = 27.66 * KB;
const MINIPROGRAM_ALL_IN = 20.26 * KB;
const TELEMETRY_PLUGIN = 2.11 * KB;
const cases = [
  // What the browser entry's ky would cost on its own (bundled from the devDependency).
  { name: 'ky alone (reference)', code: "export { default } from 'ky';" },
  { name: 'channel-sdk (browser entry, all exports)', code: "export * from 'channel-sdk';", budget: BROWSER_ALL_IN },
  { name: 'channel-sdk createClient only', code: "export { createClient } from 'channel-sdk';", budget: BROWSER_ALL_IN },
  // The telemetry plug-in alone, and an app that imports it beside createClient (what it adds).
  { name: 'channel-sdk/telemetry (the plug-in alone)', code: "export { clientTelemetry } from 'channel-sdk/telemetry';", budget: TELEMETRY_PLUGIN },
  {
    name: 'channel-sdk createClient + clientTelemetry',
    code: "export { createClient } from 'channel-sdk'; export { clientTelemetry } from 'channel-sdk/telemetry';",
  },
  // What uni-app and Taro bundle (dist/miniprogram.js); reported, the budget is on miniprogram_dist.
  { name: 'channel-sdk/miniprogram (uni-app / Taro bundlers, all exports)', code: "export * from 'channel-sdk/miniprogram';" },
  // What an edge function bundles (Web Crypto build, zod/mini schemas included); reported, not budgeted.
  { name: 'channel-sdk/server (edge build, all exports)', code: "export * from 'channel-sdk/server';" },
];

// How a user's bundler would take the browser entry; also used by --breakdown.
const browserBuild = { bundle: true, minify: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'silent' };

async function measure(code) {
  const result = await build({ ...browserBuild, stdin: { contents: code, resolveDir: process.cwd(), loader: 'js' } });
  const bytes = result.outputFiles[0].contents;
  return { min: bytes.length, gz: gzipSync(bytes, { level: 9 }).length };
}

// `npm run size -- --breakdown`: minified bytes per source module, to see where a budget goes.
// Gzip is not additive per module, so only the totals are given gzipped.
if (process.argv.includes('--breakdown')) {
  const mini = await build({ ...miniprogramBuild, write: false, metafile: true });
  const browser = await build({ ...browserBuild, entryPoints: ['src/index.ts'], metafile: true });
  for (const [title, metafile] of [
    ['miniprogram_dist/index.js', mini.metafile],
    ['browser entry, all-in', browser.metafile],
  ]) {
    const inputs = Object.values(metafile.outputs)[0].inputs;
    const rows = Object.entries(inputs)
      .map(([file, { bytesInOutput }]) => [file.replace(/^node_modules\//, ''), bytesInOutput])
      .filter(([, bytes]) => bytes > 0)
      .toSorted((a, b) => b[1] - a[1]);
    console.log(`\n${title}: minified bytes by module\n` + rows.map(([file, bytes]) => `${String(bytes).padStart(7)}  ${file}`).join('\n'));
  }
  process.exit(0);
}

const rows = [];
let failed = false;
// miniprogram_dist/index.js is measured as shipped: already bundled with mitt and minified.
{
  const bytes = readFileSync('miniprogram_dist/index.js');
  const gz = gzipSync(bytes, { level: 9 }).length;
  const ok = gz <= MINIPROGRAM_ALL_IN;
  rows.push(
    `| miniprogram_dist/index.js (WeChat npm build, all-in) | ${(bytes.length / KB).toFixed(2)} KB | ${(gz / KB).toFixed(2)} KB | budget ${(MINIPROGRAM_ALL_IN / KB).toFixed(2)} KB ${ok ? 'ok' : 'OVER BUDGET'} |`,
  );
  failed ||= !ok;
  const plugin = gzipSync(readFileSync('miniprogram_dist/telemetry.js'), { level: 9 }).length;
  rows.push(
    `| miniprogram_dist/telemetry.js (WeChat npm build, the plug-in) | ${(readFileSync('miniprogram_dist/telemetry.js').length / KB).toFixed(2)} KB | ${(plugin / KB).toFixed(2)} KB |  |`,
  );
}
for (const c of cases) {
  const size = await measure(c.code);
  let verdict = '';
  if (c.budget !== undefined) {
    const ok = size.gz <= c.budget;
    failed ||= !ok;
    verdict = `budget ${(c.budget / KB).toFixed(2)} KB ${ok ? 'ok' : 'OVER BUDGET'}`;
  }
  rows.push(`| ${c.name} | ${(size.min / KB).toFixed(2)} KB | ${(size.gz / KB).toFixed(2)} KB | ${verdict} |`);
}
console.log('| bundle | min | min+gz | budget |\n|---|---|---|---|\n' + rows.join('\n'));
if (failed) {
  console.error('size budget exceeded');
  process.exit(1);
}
