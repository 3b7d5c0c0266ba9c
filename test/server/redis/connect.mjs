// A user's Redis client in a child process (worker.mjs, the inbox's inbox-instance.mjs): the named
// package (ioredis, ioredis-v5, redis, redis-v5, redis-v4) on one node (url) or a Redis Cluster
// (clusterNodes), connected the way its README says, errors heard (the tests stop Redis on purpose).
const ignore = () => {};

export async function connect(name, url, clusterNodes) {
  if (name.startsWith('ioredis')) {
    const { Redis, Cluster } = await import(name);
    const client = clusterNodes
      ? new Cluster(clusterNodes.map((node) => ({ host: new URL(node).hostname, port: Number(new URL(node).port) })))
      : new Redis(url);
    client.on('error', ignore);
    client.on('node error', ignore);
    await new Promise((resolve) => client.once('ready', resolve));
    return { client, close: async () => client.disconnect() };
  }
  const { createClient, createCluster } = await import(name);
  const client = clusterNodes ? createCluster({ rootNodes: clusterNodes.map((node) => ({ url: node })) }) : createClient({ url });
  client.on('error', ignore);
  await client.connect();
  return { client, close: async () => (typeof client.destroy === 'function' ? client.destroy() : client.disconnect()) };
}
