// The receiver (every instance that takes pushes): verifies each push, stores it in Redis and
// answers 202 at once; 503 while Redis cannot store it, so the service delivers it again.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from 'channel-sdk/server';
import { redis, webhook } from './webhook-inbox.js';

const server = createServer(toNodeHandler(webhook)).listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`receiving pushes on http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/channel`);
});
process.once('SIGTERM', () => server.close(() => void redis.quit().then(() => process.exit(0))));
