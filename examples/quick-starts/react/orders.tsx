'use client'; // Next.js: this component runs in the browser (Vite ignores the line)
// orders.tsx: the signed-in user's orders and where their parcels are, from the service; Reload asks again.
import { isChannelError } from 'channel-sdk';
import { useCallback, useEffect, useState } from 'react';
import { client } from './channel-client';

interface Order {
  order_no: string;
  status: string;
}
interface Shipment {
  express_company?: string;
  tracking_no?: string;
  shipment_status?: string;
}

export function Orders() {
  const [orders, setOrders] = useState<Array<Order & { shipments: Shipment[] }>>([]);
  const [error, setError] = useState('');
  const load = useCallback(async () => {
    try {
      const { orders } = await client.get<{ orders: Order[] }>('/open/api/v1/sdk/orders'); // the sandbox's paths
      // Each order's logistics (what the service is for): its shipments, their carrier and status.
      const logistics = (order_no: string) => client.get<{ shipments: Shipment[] }>('/open/api/v1/sdk/logistics', { searchParams: { order_no } });
      setOrders(await Promise.all(orders.map(async (order) => ({ ...order, shipments: (await logistics(order.order_no)).shipments }))));
      setError('');
    } catch (e) {
      setError(isChannelError(e) ? `${e.code}: ${e.message}` : String(e)); // never contains a token
    }
  }, []);
  useEffect(() => void load(), [load]);

  return (
    <main>
      <button onClick={() => void load()}>Reload</button>
      {error && <p role="alert">{error}</p>}
      <ul>
        {orders.map((order) => (
          <li key={order.order_no}>
            {order.order_no}: {order.status}
            {order.shipments.map((s) => ` · ${s.express_company ?? ''} ${s.tracking_no ?? ''} ${s.shipment_status ?? ''}`)}
          </li>
        ))}
      </ul>
    </main>
  );
}
