// src/pages/index/index.jsx: the signed-in user's orders, from the service; pull down to reload.
import { Text, View } from '@tarojs/components';
import Taro, { useLoad, usePullDownRefresh } from '@tarojs/taro';
import { isChannelError } from 'channel-sdk/miniprogram';
import { useState } from 'react';
import { client } from '../../channel';

export default function Index() {
  const [orders, setOrders] = useState([]);
  const [error, setError] = useState('');
  const load = () =>
    client.get('/open/api/v1/sdk/orders').then(
      (data) => (setOrders(data.orders), setError('')),
      (e) => setError(isChannelError(e) ? e.code : String(e)),
    );
  useLoad(load);
  usePullDownRefresh(() => load().then(() => Taro.stopPullDownRefresh()));

  return (
    <View>
      {orders.map((order) => (
        <View key={order.order_no}>
          {order.order_no}: {order.status}
        </View>
      ))}
      {error && <Text>{error}</Text>}
    </View>
  );
}
