// A web page: the client asks your backend for the token, the SDK does the rest.
import { createClient, isChannelError } from 'channel-sdk';

declare const CHANNEL_BASE_URL: string; // the service's URL, set when the page is built (esbuild --define)

export const client = createClient({
  baseUrl: CHANNEL_BASE_URL,
  // Returns ONLY the access_token string; with forceRefresh, your backend must skip its cache
  // (`rejected` names the token a 401 just rejected, without sending it: the route never answers with it).
  tokenProvider: async ({ forceRefresh, rejected, signal }) => {
    const query = forceRefresh ? '?force=1&rejected=' + (rejected || '') : '';
    const r = await fetch('/channel-token' + query, { credentials: 'include', ...(signal ? { signal } : {}) });
    if (!r.ok) throw new Error('token route answered HTTP ' + r.status);
    return ((await r.json()) as { access_token: string }).access_token;
  },
});

client.on('auth:failed', () => location.assign('/login')); // 401 even after a fresh token

try {
  const { orders } = await client.get<{ orders: Array<{ order_no: string }> }>('/open/api/v1/sdk/orders');
  const order_no = orders[0]?.order_no ?? ''; // its logistics: where its parcels are (what the service's pushes carry)
  const { shipments } = await client.get<{ shipments: Array<{ shipment_status?: string }> }>('/open/api/v1/sdk/logistics', { searchParams: { order_no } });
  const created = await client.post<{ order_no: string }>('/open/api/v1/sdk/orders', { json: { partner_order_no: 'P-20001' } });
  console.log(orders.length, 'orders;', order_no, shipments[0]?.shipment_status, '; created', created.order_no);
} catch (error) {
  if (isChannelError(error))
    console.warn(error.code, error.message); // never contains a token
  else throw error;
}
