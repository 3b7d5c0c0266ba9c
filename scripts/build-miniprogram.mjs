// Builds miniprogram_dist/index.js for WeChat's "build npm": CommonJS, every dependency
// inlined (the directory is copied verbatim), syntax no newer than ES2017 (no regenerator,
// so no `Function(...)`), minified. Checked by test/miniprogram/bundle.test.ts.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/miniprogram.ts'],
  outfile: 'miniprogram_dist/index.js',
  bundle: true,
  format: 'cjs',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  target: 'es2017',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
});
