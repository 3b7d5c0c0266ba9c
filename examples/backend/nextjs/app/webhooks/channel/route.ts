// App Router: app/webhooks/channel/route.ts
import { webhook } from '@/channel';

export const POST = webhook;
