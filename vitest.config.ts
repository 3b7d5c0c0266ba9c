import { defineConfig } from 'vitest/config';

// Client code runs under happy-dom (a browser-like global scope); server-side code under node.
// Inline projects do not inherit the root's test options, so each states its timeout: the
// machines are shared and real servers, browsers and child processes take their time.
const testTimeout = 20_000;

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'client',
          testTimeout,
          // happy-dom minus its devtools network log (see the file).
          environment: './test/helpers/quiet-happy-dom.ts',
          include: ['test/core/**/*.test.ts', 'test/transports/*.test.ts', 'test/conformance/*.test.ts', 'test/readme/browser-*.test.ts'],
          exclude: ['test/conformance/miniprogram.test.ts'],
        },
      },
      {
        test: {
          name: 'node',
          testTimeout,
          environment: 'node',
          include: [
            'test/package/**/*.test.ts',
            'test/server/**/*.test.ts',
            'test/testing/**/*.test.ts',
            'test/e2e/**/*.test.ts',
            'test/transports/miniprogram/**/*.test.ts',
            'test/conformance/miniprogram.test.ts',
            'test/tokens/**/*.test.ts',
            'test/model/**/*.test.ts',
            'test/readme/**/*.test.ts',
          ],
          exclude: ['test/readme/browser-*.test.ts'],
        },
      },
    ],
  },
});
