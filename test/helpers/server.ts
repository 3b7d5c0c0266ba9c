import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The node:http server, for tests that watch its connections. */
  server: import('node:http').Server;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage & { body: string; raw: Buffer }, res: ServerResponse) => void | Promise<void>;

/**
 * Starts a real node:http server on 127.0.0.1:0. Answers CORS preflights itself so the
 * same server serves Node's fetch, happy-dom's fetch and a real browser.
 */
export async function startServer(handler: Handler): Promise<TestServer> {
  const server = createServer((req, res) => {
    res.setHeader('access-control-allow-origin', '*');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS',
        'access-control-allow-headers': req.headers['access-control-request-headers'] || '*',
        'access-control-max-age': '600',
      });
      res.end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const request = Object.assign(req, { body: raw.toString('utf8'), raw });
      Promise.resolve(handler(request, res)).catch((error: unknown) => {
        res.writeHead(599).end(String(error));
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}
