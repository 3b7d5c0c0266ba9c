import { rmSync } from 'node:fs';
import { dts } from 'rollup-plugin-dts';
import esbuild from 'rollup-plugin-esbuild';

// One input per package entry; shared code lands in chunks. Dependencies stay external
// (the user's bundler dedupes them); the mini-program bundle, which inlines them, is separate.
// CJS output: ky is ESM-only, and require(esm) returns its namespace (__esModule: true), hence interop 'auto'.
const input = { index: 'src/index.ts', server: 'src/server.ts', 'server-node': 'src/server-node.ts', testing: 'src/testing.ts' };
// Both server builds share one declaration file: their exports are identical.
const typesInput = { index: 'src/index.ts', server: 'src/server.ts', testing: 'src/testing.ts', miniprogram: 'src/miniprogram.ts' };
// Chunk names carry a content hash, so every build starts from an empty dist/: stale chunks
// would otherwise pile up and ship in the package (test/package checks none does).
rmSync('dist', { recursive: true, force: true });

const external = (id) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('\0');

export default [
  {
    input,
    external,
    plugins: [esbuild({ target: 'es2022', tsconfig: 'tsconfig.json' })],
    output: [
      { dir: 'dist', format: 'es', entryFileNames: '[name].js', chunkFileNames: 'chunks/[name]-[hash].js', sourcemap: true },
      { dir: 'dist', format: 'cjs', entryFileNames: '[name].cjs', chunkFileNames: 'chunks/[name]-[hash].cjs', sourcemap: true, interop: 'auto' },
    ],
  },
  // uni-app and Taro bundle this one (ES2017 syntax, dependencies left to their bundler);
  // WeChat's npm build takes miniprogram_dist/ instead (scripts/build-miniprogram.mjs).
  {
    input: { miniprogram: 'src/miniprogram.ts' },
    external,
    plugins: [esbuild({ target: 'es2017', tsconfig: 'tsconfig.json' })],
    output: [
      { dir: 'dist', format: 'es', entryFileNames: '[name].js', chunkFileNames: 'chunks/mp-[name]-[hash].js', sourcemap: true },
      { dir: 'dist', format: 'cjs', entryFileNames: '[name].cjs', chunkFileNames: 'chunks/mp-[name]-[hash].cjs', sourcemap: true, interop: 'auto' },
    ],
  },
  // The CLI: ESM only, with a shebang.
  {
    input: { 'sandbox-cli': 'src/sandbox-cli.ts' },
    external,
    plugins: [esbuild({ target: 'es2022', tsconfig: 'tsconfig.json' })],
    output: { dir: 'dist', format: 'es', entryFileNames: '[name].js', chunkFileNames: 'chunks/[name]-[hash].js', banner: '#!/usr/bin/env node' },
  },
  {
    input: typesInput,
    external,
    plugins: [dts({ tsconfig: 'tsconfig.json' })],
    output: [
      { dir: 'dist', format: 'es', entryFileNames: '[name].d.ts', chunkFileNames: 'chunks/[name]-[hash].d.ts' },
      { dir: 'dist', format: 'es', entryFileNames: '[name].d.cts', chunkFileNames: 'chunks/[name]-[hash].d.cts' },
    ],
  },
];
