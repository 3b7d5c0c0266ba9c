import { defineConfig } from 'vitest/config';

// Two tiers (CONTRIBUTING "Test tiers"):
// - fast (`npm test`: the projects `client` and `node`): the source under test in this process,
//   over the emulated transports and local HTTP servers; no build, browser, Redis or child process.
// - integration (`npm run verify`: the projects `integration` and `integration-dom`): what needs the
//   build (dist/, the packed tarball), Chromium, redis-server, real frameworks or child processes.
// A file is integration when it sits in one of the folders below or its name ends in
// `.integration.test.ts`; everything else is fast and must stay so.
const integration = ['test/e2e/**/*.test.ts', 'test/readme/**/*.test.ts', 'test/package/**/*.test.ts', 'test/**/*.integration.test.ts'];
// Fast files whose searches the integration tier runs again full-size (test/helpers/tier.ts).
const fullSize = [
  'test/server/crypto/vectors.test.ts',
  'test/server/crypto/properties.test.ts',
  'test/server/webhooks/shape.test.ts',
  'test/core/url.test.ts',
  'test/transports/fetch-native.test.ts',
  'test/server/tokens/token-exchange-cache.test.ts',
  'test/tokens/host-store.test.ts',
  'test/server/webhooks/dedup.test.ts',
  'test/server/webhooks/inbox/prefix.test.ts',
  'test/conformance/files-node.test.ts',
];
// The slower stages have their own configs (test/cluster, test/frameworks) and scripts.
const elsewhere = ['test/cluster/**', 'test/frameworks/**', 'test/consumers/**'];
const dom = './test/helpers/quiet-happy-dom.ts';
// Client code runs under happy-dom (a browser-like global scope) unless a file asks for Node
// (`// @vitest-environment node`); the mini-program emulations run under Node, which has no
// `wx` and none of the browser globals a host lacks either.
const clientFiles = ['test/core/**/*.test.ts', 'test/transports/*.test.ts', 'test/conformance/*.test.ts'];
// Inline projects do not inherit the root's test options, so each states its timeout: the
// machines are shared and real servers, browsers and child processes take their time.
const testTimeout = 20_000;
// vi.waitFor bounded by the test's timeout, not 1 s (test/helpers/busy-machine.ts).
const setupFiles = ['./test/helpers/busy-machine.ts'];
// Fast tests run the source, never dist/ (a fresh clone has none): the recipes under examples/
// import the package by its name, which the fast projects resolve to src/.
const source = (entry: string) => new URL(`./src/${entry}`, import.meta.url).pathname;
const fromSource = {
  alias: [
    { find: /^channel-sdk$/, replacement: source('index.ts') },
    { find: /^channel-sdk\/miniprogram$/, replacement: source('miniprogram.ts') },
    { find: /^channel-sdk\/telemetry$/, replacement: source('telemetry.ts') },
  ],
};

export default defineConfig({
  test: {
    projects: [
      { resolve: fromSource, test: { name: 'client', testTimeout, setupFiles, environment: dom, include: clientFiles, exclude: integration } },
      {
        resolve: fromSource,
        test: {
          name: 'node',
          testTimeout,
          setupFiles,
          environment: 'node',
          include: ['test/**/*.test.ts'],
          exclude: [...clientFiles, ...integration, ...elsewhere],
        },
      },
      {
        test: {
          name: 'integration',
          testTimeout,
          environment: 'node',
          // The webhook vectors and properties once more, now also against dist/ (test/server/implementations.ts),
          // and the property tests full-size (test/helpers/tier.ts).
          include: [...integration, ...fullSize],
          exclude: ['test/readme/browser-*.test.ts'],
          // Full-size storms and searches (test/helpers/tier.ts).
          env: { CHANNEL_TEST_DIST: '1', CHANNEL_TEST_FULL: '1' },
        },
      },
      { test: { name: 'integration-dom', testTimeout, environment: dom, include: ['test/readme/browser-*.test.ts'], env: { CHANNEL_TEST_FULL: '1' } } },
    ],
  },
});
