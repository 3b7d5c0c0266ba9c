// Builds miniprogram_dist/index.js for WeChat's "build npm": CommonJS, every dependency
// inlined (the directory is copied verbatim), syntax no newer than ES2017 (no regenerator,
// so no `Function(...)`), minified. Checked by test/miniprogram/bundle.test.ts.
// scripts/size.mjs imports `miniprogramBuild` for its per-module breakdown.
import { build } from 'esbuild';
import { pathToFileURL } from 'node:url';

export const miniprogramBuild = {
  entryPoints: ['src/miniprogram.ts'],
  outfile: 'miniprogram_dist/index.js',
  bundle: true,
  format: 'cjs',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  target: 'es2017',
  minify: true,
  legalComments: 'none',
  // Class fields as plain assignments in the constructor: at ES2017 esbuild would otherwise
  // define every field through a __publicField helper (0.1 KB gz). A field without an
  // initialiser (an error's optional `method`) is then absent until set, not undefined.
  tsconfigRaw: { compilerOptions: { useDefineForClassFields: false, alwaysStrict: true } },
  logLevel: 'warning',
};

if (import.meta.url === pathToFileURL(process.argv[1]).href) await build(miniprogramBuild);
