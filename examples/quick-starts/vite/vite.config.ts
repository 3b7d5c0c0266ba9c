// vite.config.ts: the dev server hands /channel-token to your backend, so the page asks for its
// token on its own origin, with its own session cookie. Without the proxy Vite answers that path
// with index.html and the tokenProvider fails with "Unexpected token '<'".
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  server: { proxy: { '/channel-token': 'http://127.0.0.1:3000' } }, // your backend; `vite preview` uses it too
});
