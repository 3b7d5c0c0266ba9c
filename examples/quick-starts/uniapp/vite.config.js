// vite.config.js: uni-app's compiler, as a vite plugin.
import uni from '@dcloudio/vite-plugin-uni';
import { defineConfig } from 'vite';

export default defineConfig({ plugins: [uni()] });
