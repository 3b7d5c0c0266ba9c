// The two front doors of a route, behind one interface, so that each status matrix runs
// against both: a Fetch `Request` handed to the route, and node:http through toNodeHandler.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler, type FetchRoute } from '../../../src/server-node.js';

export interface Sent {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  json: unknown;
}

export interface Door {
  send(sent: Sent): Promise<Answer>;
  close(): Promise<void>;
}

const base = 'http://partner.example';

async function fetchDoor(route: FetchRoute): Promise<Door> {
  return {
    async send({ method = 'POST', path = '/webhooks/channel', headers = {}, body }) {
      const init: RequestInit = { method, headers };
      if (body !== undefined && method !== 'GET' && method !== 'HEAD') init.body = body as BodyInit;
      const response = await route(new Request(base + path, init));
      const text = await response.text();
      return { status: response.status, headers: Object.fromEntries(response.headers), json: text ? JSON.parse(text) : undefined };
    },
    close: async () => {},
  };
}

/** A node:http server on 127.0.0.1:0 serving `toNodeHandler(route)`. */
export async function nodeServer(route: FetchRoute): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer(toNodeHandler(route));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function nodeDoor(route: FetchRoute): Promise<Door> {
  const running = await nodeServer(route);
  return {
    send: ({ method = 'POST', path = '/webhooks/channel', headers = {}, body }) =>
      new Promise<Answer>((resolve, reject) => {
        const req = httpRequest(running.url + path, { method, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            resolve({ status: res.statusCode!, headers: res.headers as Record<string, string>, json: text ? JSON.parse(text) : undefined });
          });
        });
        req.on('error', reject);
        req.end(body);
      }),
    close: running.close,
  };
}

export const doors: Array<[string, (route: FetchRoute) => Promise<Door>]> = [
  ['Fetch Request', fetchDoor],
  ['node:http (toNodeHandler)', nodeDoor],
];
