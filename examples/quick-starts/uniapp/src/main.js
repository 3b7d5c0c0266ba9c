// src/main.js: the app's entry, as every uni-app (Vue 3) project has it.
import { createSSRApp } from 'vue';
import App from './App.vue';

export function createApp() {
  return { app: createSSRApp(App) };
}
