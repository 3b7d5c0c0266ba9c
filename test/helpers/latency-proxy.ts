/**
 * A TCP proxy in front of a real server (redis-server) that delays every answer by `delayMs`:
 * what the client sends goes through at once, each chunk the server sends back is held for
 * `delayMs` from its arrival (order kept, pipelined answers not serialized). A Redis on a slow
 * network or under load, as opposed to a frozen one: every command answers, late.
 */
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface LatencyProxy {
  /** `redis://127.0.0.1:<port>` of the proxy. */
  url: string;
  close(): Promise<void>;
}

export async function startLatencyProxy(target: { port: number }, delayMs: number): Promise<LatencyProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => void setTimeout(() => client.writable && client.write(chunk), delayMs));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => setTimeout(() => client.destroy(), delayMs));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
