import { defineConfig } from 'vitest/config';

// `npm run test:cluster`: the multi-process tests on a real 3-master Redis Cluster (issue #21),
// outside `npm test` because each file starts its own cluster; .ci/run runs it.
export default defineConfig({
  test: {
    name: 'cluster',
    environment: 'node',
    include: ['test/cluster/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
