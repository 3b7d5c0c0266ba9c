// A Node service calling the service for its users: the token exchange is the tokenProvider.
import { createClient } from 'channel-sdk';
import { createTokenExchange } from 'channel-sdk/server';
import { z } from 'zod';

const exchange = createTokenExchange({
  baseUrl: process.env.CHANNEL_BASE_URL!,
  accessKey: process.env.CHANNEL_ACCESS_KEY!,
  secretKey: process.env.CHANNEL_SECRET_KEY!,
});

export function clientFor(userId: string) {
  return createClient({
    baseUrl: process.env.CHANNEL_BASE_URL!,
    tokenProvider: async ({ forceRefresh }) => (await exchange.getToken(userId, { forceRefresh })).accessToken,
  });
}

// A schema (zod here; any Standard Schema works) checks the data and types the result.
const Logistics = z.object({
  order_no: z.string(),
  shipments: z.array(z.object({ tracking_no: z.string().optional(), shipment_status: z.string().optional() })),
});

const logistics = await clientFor('user-42').get('/open/api/v1/sdk/logistics', {
  searchParams: { order_no: 'SO20240601001' },
  schema: Logistics,
});
console.log(logistics.order_no, logistics.shipments[0]?.shipment_status);
