// vitest.config.mjs: the page tests (`npx vitest run`), in Node; @vitejs/plugin-vue compiles the .vue files.
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vitest/config';

export default defineConfig({ plugins: [vue()], test: { environment: 'node' } });
