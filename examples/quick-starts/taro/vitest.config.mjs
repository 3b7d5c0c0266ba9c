// vitest.config.mjs: the page tests (`npx vitest run`), in Node; JSX with React's automatic runtime, as Taro compiles it.
import { defineConfig } from 'vitest/config';

export default defineConfig({ esbuild: { jsx: 'automatic' }, test: { environment: 'node' } });
