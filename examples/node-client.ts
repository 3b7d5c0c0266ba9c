// A Node service calling the service for a user: the token exchange is the tokenProvider.
import { createClient } from 'channel-sdk';
import { createTokenExchange } from 'channel-sdk/server';
import { z } from 'zod';

const baseUrl = process.env.CHANNEL_BASE_URL!;
const exchange = createTokenExchange({ baseUrl, accessKey: process.env.CHANNEL_ACCESS_KEY!, secretKey: process.env.CHANNEL_SECRET_KEY! });
const client = createClient({
  baseUrl,
  tokenProvider: async ({ forceRefresh, rejected }) => (await exchange.getToken('user-42', { forceRefresh, rejected })).accessToken,
});

// A schema (zod here; any Standard Schema works) checks the data and types the result.
const Logistics = z.object({
  order_no: z.string(),
  shipments: z.array(z.object({ tracking_no: z.string().optional(), shipment_status: z.string().optional() })),
});
const logistics = await client.get('/open/api/v1/sdk/logistics', { searchParams: { order_no: 'SO20240601001' }, schema: Logistics });
console.log(logistics.order_no, logistics.shipments[0]?.shipment_status);
