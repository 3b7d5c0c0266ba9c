// server.ts starts your app; here it also serves the web quick start's page from public/.
import type { AddressInfo } from 'node:net';
import express from 'express';
import { app } from './express.js';

app.use(express.static('public'));
const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
