import { defineConfig } from 'vitest/config';

// Client code runs under happy-dom (a browser-like global scope); server-side code under node.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'client',
          // happy-dom minus its devtools network log (see the file).
          environment: './test/helpers/quiet-happy-dom.ts',
          include: ['test/core/**/*.test.ts', 'test/transports/**/*.test.ts', 'test/conformance/**/*.test.ts', 'test/readme/browser-*.test.ts'],
        },
      },
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/package/**/*.test.ts', 'test/server/**/*.test.ts', 'test/testing/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/miniprogram/**/*.test.ts', 'test/model/**/*.test.ts', 'test/readme/**/*.test.ts'],
          exclude: ['test/readme/browser-*.test.ts'],
        },
      },
    ],
    testTimeout: 20_000,
  },
});
