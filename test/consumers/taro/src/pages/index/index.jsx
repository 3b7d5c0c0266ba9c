import { useState } from 'react';
import { View, Text } from '@tarojs/components';
import Taro, { useLoad } from '@tarojs/taro';
// channel-scenario.js is test/consumers/shared/scenario.js, copied in by miniprogram-frameworks.mjs
import { runScenario } from '../../channel-scenario';

export default function Index() {
  const [status, setStatus] = useState('running');
  useLoad(() => {
    runScenario({
      call: (method, url) => Taro.request({ url, method }).then((response) => response.data),
      uploadFile: Taro.uploadFile,
      getStorageSync: Taro.getStorageSync,
      setStorageSync: Taro.setStorageSync,
    }).then(setStatus);
  });

  return (
    <View className="index">
      <Text>{status}</Text>
    </View>
  );
}
