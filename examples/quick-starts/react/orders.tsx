'use client'; // Next.js: this component runs in the browser (Vite ignores the line)
// orders.tsx: the signed-in user's orders, from the service; Reload asks again.
import { isChannelError } from 'channel-sdk';
import { useCallback, useEffect, useState } from 'react';
import { client } from './channel-client';

interface Order {
  order_no: string;
  status: string;
}

export function Orders() {
  const [orders, setOrders] = useState<Order[]>([]);
  const [error, setError] = useState('');
  const load = useCallback(async () => {
    try {
      setOrders((await client.get<{ orders: Order[] }>('/open/api/v1/sdk/orders')).orders); // the sandbox's path
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
          </li>
        ))}
      </ul>
    </main>
  );
}
