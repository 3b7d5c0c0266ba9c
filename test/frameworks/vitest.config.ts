import { defineConfig } from 'vitest/config';

// `npm run test:frameworks`: the Next.js recipes with a real `next build` and `next start`
// (tens of seconds, so outside `npm test`; .ci/run runs it too).
export default defineConfig({
  test: {
    name: 'frameworks',
    environment: 'node',
    include: ['test/frameworks/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 240_000,
  },
});
