import { rmSync } from 'node:fs';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { dts } from 'rollup-plugin-dts';
import esbuild from 'rollup-plugin-esbuild';
import { thirdPartyNotices } from './scripts/third-party-notices.mjs';

// One input per package entry; shared code lands in chunks. ky, mitt and zod are
// bundled (tree-shaken) into the entries that use them, so the package has no runtime
// dependencies: WeChat's npm build packs every dependency and rejects their syntax, strict
// installs refuse ky's engines field, and CommonJS loaders cannot require ESM-only ky.
// Only node:* built-ins stay external.
const input = { index: 'src/index.ts', server: 'src/server.ts', 'server-node': 'src/server-node.ts', testing: 'src/testing.ts' };
// Both server builds share one declaration file: their exports are identical.
const typesInput = {
  index: 'src/index.ts',
  server: 'src/server.ts',
  testing: 'src/testing.ts',
  miniprogram: 'src/miniprogram.ts',
  telemetry: 'src/telemetry.ts',
};
// Chunk names carry a content hash, so every build starts from an empty dist/: stale chunks
// would otherwise pile up and ship in the package (test/package checks none does).
rmSync('dist', { recursive: true, force: true });

const external = (id) => id.startsWith('node:');
// `channel-sandbox check` is built once, as dist/check.cjs (the last build below), and loaded
// by both testing builds and the CLI: four copies (ESM, CommonJS and their maps) would add
// to the install what one copy does four times. CommonJS, so that Jest's CommonJS mode can require it too.
const checks = /\/src\/testing\/check\/checks\.ts$/;
// createMockHost likewise, as dist/mock-host.cjs (issue #35): one copy, and no maps.
const mockHost = /\/src\/testing\/mock-host\/mock-host\.ts$/;
const builtOnce = (id) => (checks.test(id) ? './check.cjs' : mockHost.test(id) ? './mock-host.cjs' : undefined);
const toChecks = {
  external: (id, _importer, resolved) => external(id) || (resolved && builtOnce(id) !== undefined),
  paths: (id) => builtOnce(id) ?? id,
};
// `channel-sandbox inbox` takes createRedisInbox from the server build beside it, not a copy of its own.
const inboxForCli = /\/src\/server-node\.ts$/;
const resolve = () => nodeResolve({ exportConditions: ['import', 'default'], preferBuiltins: true });
// The bundled libraries go through esbuild too: lowered to the entry's target like our own
// code, and stripped of their doc comments (whose `import ... from` examples would read as imports).
const compile = (target) => esbuild({ target, tsconfig: 'tsconfig.json', include: /\.[cm]?[jt]s$/, exclude: [] });
// dist/THIRD_PARTY_NOTICES.md: the licences of what the entries below bundle.
const notices = thirdPartyNotices();
// Source maps cover our own code only: the bundled libraries' lines map to nothing (their
// sources are not installed, and their mappings alone would be most of the install).
// The CommonJS maps leave out the sources' text (sourcemapExcludeSources): Node's
// --enable-source-maps needs only the mappings; devtools and bundlers read the ESM maps.
const ownMapsOnly = {
  name: 'maps-for-our-code-only',
  transform(code, id) {
    return id.includes('/node_modules/') ? { code, map: { mappings: '' } } : null;
  },
};

// The server and testing code's ESM maps leave the sources' text out too: Node's
// --enable-source-maps needs only the mappings, and the install stays within its budget
// (test:consumers). The browser entry's maps keep the text, for devtools.
const serverMapsWithoutSources = {
  name: 'server-maps-without-sources',
  generateBundle(_options, bundle) {
    for (const [fileName, item] of Object.entries(bundle)) {
      if (item.type !== 'asset' || !fileName.endsWith('.map')) continue;
      const map = JSON.parse(String(item.source));
      if (!map.sources.some((source) => /\/src\/(server|testing)\/|\/src\/(server|server-node|testing|sandbox-cli)\.ts$/.test(source))) continue;
      delete map.sourcesContent;
      item.source = JSON.stringify(map);
    }
  },
};

export default [
  {
    input,
    external: toChecks.external,
    plugins: [resolve(), compile('es2022'), ownMapsOnly, notices],
    output: [
      {
        dir: 'dist',
        format: 'es',
        entryFileNames: '[name].js',
        chunkFileNames: 'chunks/[name]-[hash].js',
        sourcemap: true,
        paths: toChecks.paths,
        plugins: [serverMapsWithoutSources],
      },
      {
        dir: 'dist',
        format: 'cjs',
        entryFileNames: '[name].cjs',
        chunkFileNames: 'chunks/[name]-[hash].cjs',
        sourcemap: true,
        sourcemapExcludeSources: true,
        paths: toChecks.paths,
      },
    ],
  },
  // uni-app and Taro bundle this one (ES2017 syntax, mitt inlined as well);
  // WeChat's npm build takes miniprogram_dist/ instead (scripts/build-miniprogram.mjs).
  // Its ESM map leaves the sources' text out too (it would be the install's largest file): Taro's
  // webpack and uni-app's vite do not read maps from node_modules unless configured to, and
  // dist/miniprogram.js itself is readable, unminified code.
  {
    input: { miniprogram: 'src/miniprogram.ts' },
    external,
    plugins: [resolve(), compile('es2017'), ownMapsOnly, notices],
    output: [
      { dir: 'dist', format: 'es', entryFileNames: '[name].js', chunkFileNames: 'chunks/mp-[name]-[hash].js', sourcemap: true, sourcemapExcludeSources: true },
      {
        dir: 'dist',
        format: 'cjs',
        entryFileNames: '[name].cjs',
        chunkFileNames: 'chunks/mp-[name]-[hash].cjs',
        sourcemap: true,
        sourcemapExcludeSources: true,
      },
    ],
  },
  // The client's telemetry plug-in (channel-sdk/telemetry), for both client entries: ES2017 like the
  // mini-program entry (uni-app and Taro bundle it too), and one file with no chunk, so that it
  // shares nothing with the entry an app imports beside it and is measured on its own.
  {
    input: { telemetry: 'src/telemetry.ts' },
    external,
    plugins: [resolve(), compile('es2017'), ownMapsOnly],
    output: [
      { dir: 'dist', format: 'es', entryFileNames: '[name].js', sourcemap: true, sourcemapExcludeSources: true },
      { dir: 'dist', format: 'cjs', entryFileNames: '[name].cjs', sourcemap: true, sourcemapExcludeSources: true },
    ],
  },
  // The CLI: ESM only, with a shebang. It takes the sandbox from the channel-sdk/testing build
  // next to it, and the checks from dist/check.cjs, rather than a second copy of them and zod.
  {
    input: { 'sandbox-cli': 'src/sandbox-cli.ts' },
    external: (id, importer, resolved) =>
      toChecks.external(id, importer, resolved) || (resolved && (id.endsWith('/src/testing/sandbox/sandbox.ts') || inboxForCli.test(id))),
    plugins: [resolve(), compile('es2022'), notices],
    output: {
      dir: 'dist',
      format: 'es',
      entryFileNames: '[name].js',
      banner: '#!/usr/bin/env node',
      paths: (id) => (id.endsWith('/src/testing/sandbox/sandbox.ts') ? './testing.js' : inboxForCli.test(id) ? './server-node.js' : toChecks.paths(id)),
    },
  },
  // `channel-sandbox check`, for the testing entry and the CLI, and createMockHost, for the
  // testing entry (see `checks` above): CommonJS, no source map.
  {
    input: { check: 'src/testing/check/checks.ts', 'mock-host': 'src/testing/mock-host/mock-host.ts' },
    external,
    plugins: [resolve(), compile('es2022'), notices],
    output: { dir: 'dist', format: 'cjs', entryFileNames: '[name].cjs', chunkFileNames: 'chunks/built-once-[name]-[hash].cjs' },
  },
  {
    input: typesInput,
    external,
    // The declarations our public types use from ky, mitt and zod are inlined (KyPassThrough,
    // the emitter's on/off, the exported zod/mini schemas), so the .d.cts files import nothing
    // ESM-only (TS1479 under node16 CommonJS) and nothing that is not installed.
    plugins: [dts({ tsconfig: 'tsconfig.json', includeExternal: ['ky', 'mitt', 'zod'] })],
    output: [
      { dir: 'dist', format: 'es', entryFileNames: '[name].d.ts', chunkFileNames: 'chunks/[name]-[hash].d.ts' },
      { dir: 'dist', format: 'es', entryFileNames: '[name].d.cts', chunkFileNames: 'chunks/[name]-[hash].d.cts' },
    ],
  },
];
