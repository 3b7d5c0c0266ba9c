// Pages Router: pages/api/webhooks/channel.ts
import { toNodeHandler } from 'channel-sdk/server';
import { webhook } from '@/channel';

// The handler reads the raw body itself to check the signature: Next must not parse it.
export const config = { api: { bodyParser: false } };

export default toNodeHandler(webhook);
