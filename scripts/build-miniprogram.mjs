// Builds miniprogram_dist/index.js (and telemetry.js, the plug-in) for WeChat's "build npm": CommonJS, every dependency
// inlined (the directory is copied verbatim), syntax no newer than ES2017 (no regenerator,
// so no `Function(...)`), minified. Checked by test/package/miniprogram-bundle.test.ts.
// scripts/size.mjs imports `miniprogramBuild` for its per-module breakdown.
import { build } from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const entry = 'src/miniprogram.ts';

export const miniprogramBuild = {
  entryPoints: [entry],
  outfile: 'miniprogram_dist/index.js',
  bundle: true,
  format: 'cjs',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  target: 'es2017',
  minify: true,
  legalComments: 'none',
  // Class fields as plain assignments in the constructor: at ES2017 esbuild would otherwise
  // define every field through a __publicField helper (bytes in every bundle). A field without an
  // initialiser (an error's optional `method`) is then absent until set, not undefined.
  tsconfigRaw: { compilerOptions: { useDefineForClassFields: false, alwaysStrict: true } },
  logLevel: 'warning',
};

/**
 * The entry's runtime exports assigned to `module.exports` in one object literal. esbuild's
 * own ESM-to-CJS conversion defines a getter per export through helpers (more bytes);
 * mini-programs need no live bindings. `options` override esbuild's (`{ write: false }`: the
 * bundle in memory, as the fast tests run it from source; `absWorkingDir`: another copy of the
 * sources, as scripts/size-of.mjs builds one). `source` is the entry bundled.
 */
export async function buildPlainCommonJs(options = {}, source = entry) {
  const probe = await build({
    ...miniprogramBuild,
    entryPoints: [source],
    absWorkingDir: options.absWorkingDir,
    format: 'esm',
    minify: false,
    write: false,
    metafile: true,
  });
  const names = Object.values(probe.metafile.outputs)[0].exports;
  return build({
    ...miniprogramBuild,
    ...options,
    entryPoints: undefined,
    stdin: {
      contents: `import { ${names.join(', ')} } from './${source}';\nmodule.exports = { ${names.join(', ')} };`,
      resolveDir: options.absWorkingDir || process.cwd(),
      sourcefile: 'miniprogram-cjs-entry.js',
      loader: 'js',
    },
  });
}

/**
 * `require('channel-sdk/miniprogram')`, the path uni-app, Taro and the README use, works in
 * WeChat's npm build too: it resolves `pkg/sub` inside miniprogram_npm/pkg/ as sub.js or
 * sub/index.js, so both point at the one bundle.
 */
function subpathAliases() {
  const alias = "module.exports = require('./index.js');\n";
  writeFileSync('miniprogram_dist/miniprogram.js', alias);
  mkdirSync('miniprogram_dist/miniprogram', { recursive: true });
  writeFileSync('miniprogram_dist/miniprogram/index.js', "module.exports = require('../index.js');\n");
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  await buildPlainCommonJs();
  // require('channel-sdk/telemetry') finds miniprogram_npm/channel-sdk/telemetry.js: the plug-in, a bundle of its own.
  await buildPlainCommonJs({ outfile: 'miniprogram_dist/telemetry.js' }, 'src/telemetry.ts');
  subpathAliases();
}
