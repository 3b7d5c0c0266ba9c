import { createClient } from 'channel-sdk';
import { createTokenExchange } from 'channel-sdk/server';
import { createFetch } from 'ofetch';
const baseUrl = process.env.CHANNEL_BASE_URL!;
const exchange = createTokenExchange({ baseUrl, accessKey: process.env.CHANNEL_ACCESS_KEY!, secretKey: process.env.CHANNEL_SECRET_KEY! });
const client = createClient({
  baseUrl,
  tokenProvider: async ({ forceRefresh, rejected }) => (await exchange.getToken('user-42', { forceRefresh, rejected })).accessToken,
});
let forced = 0;
client.on('token', ({ reason }) => void (reason === 'unauthorized' && forced++));
const api = createFetch({ fetch: client.fetch }).create({ baseURL: baseUrl });
const { data } = await api<{ data: { order_no: string } }>('/open/api/v1/sdk/logistics', { query: { order_no: 'SO20240601001' } });
console.log(data.order_no, 'forced refreshes:', forced);
