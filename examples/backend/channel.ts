// Your Channel setup, once per app; each framework file mounts it.
import { createTokenExchange, createWebhookHandler } from 'channel-sdk/server';
import { saveLogistics } from './your-app.js';

export const webhook = createWebhookHandler({
  // A function, read at the first push: importing this file without secrets (next build) works.
  secret: () => process.env.CHANNEL_WEBHOOK_SECRET,
  onLogisticsUpdated: async ({ logistics }) => {
    await saveLogistics(logistics); // keep it quick, or enqueue: the service waits 8 s at most
  },
});

// Also created at the first request, for the same reason; then kept (it caches tokens per user).
export const exchange = () =>
  createTokenExchange({
    baseUrl: process.env.CHANNEL_BASE_URL!,
    accessKey: process.env.CHANNEL_ACCESS_KEY!,
    secretKey: process.env.CHANNEL_SECRET_KEY!,
  });
