// A user's Redis client in a child process (worker.mjs, the inbox's inbox-instance.mjs): the named
// package (ioredis, ioredis-v5, redis, redis-v5, redis-v4) on one node (url) or a Redis Cluster
// (clusterNodes), connected the way its README says, errors heard (the tests stop Redis on purpose).
// `cold` (ioredis only): the client connects at its first command (lazyConnect), as in a process
// that starts serving while its client discovers the cluster; node-redis needs its connect().
const ignore = () => {};

export async function connect(name, url, clusterNodes, cold = false) {
  if (name.startsWith('ioredis')) {
    const { Redis, Cluster } = await import(name);
    const options = cold ? { lazyConnect: true } : {};
    const client = clusterNodes
      ? new Cluster(
          clusterNodes.map((node) => ({ host: new URL(node).hostname, port: Number(new URL(node).port) })),
          options,
        )
      : new Redis(url, options);
    client.on('error', ignore);
    client.on('node error', ignore);
    if (!cold) await new Promise((resolve) => client.once('ready', resolve));
    return { client, close: async () => client.disconnect() };
  }
  const { createClient, createCluster } = await import(name);
  const client = clusterNodes ? createCluster({ rootNodes: clusterNodes.map((node) => ({ url: node })) }) : createClient({ url });
  client.on('error', ignore);
  await client.connect();
  return { client, close: async () => (typeof client.destroy === 'function' ? client.destroy() : client.disconnect()) };
}
