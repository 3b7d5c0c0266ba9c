/**
 * An HTTP proxy in front of a real server (the sandbox) that records every request as the server
 * would receive it (method, path, headers) and the status and headers answered, and forwards both
 * ways unchanged, CORS preflights included: for what only the wire shows, such as the
 * `traceparent` header of each attempt. Once a call has resolved, its requests are all recorded.
 * `hold()` parks the requests that arrive (recorded, not forwarded) until released: requests in
 * flight for as long as a test needs them there.
 */
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The status answered; 0 while the answer has not come (or never will: a parked request dropped by its client). */
  status: number;
  /** The answer's headers (for a preflight: what the server allowed). */
  answer: IncomingHttpHeaders;
}

export interface RecordingProxy {
  /** `http://127.0.0.1:<port>` of the proxy: the client's baseUrl. */
  url: string;
  /** Every request, in arrival order. */
  requests: RecordedRequest[];
  /** Resolves once `count` requests in all have arrived. */
  arrived(count: number): Promise<void>;
  /** Parks the requests that arrive from now on; the function returned forwards those whose client still waits. */
  hold(): () => void;
  close(): Promise<void>;
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const { hostname, port } = new URL(target);
  const requests: RecordedRequest[] = [];
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  let parked: Array<() => void> | undefined;
  const server = createServer((req, res) => {
    const record: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, status: 0, answer: {} };
    requests.push(record);
    for (const waiter of waiting.filter((w) => requests.length >= w.count)) {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve();
    }
    const forward = () => {
      if (req.socket.destroyed) return;
      const upstream = request({ hostname, port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        Object.assign(record, { status: answer.statusCode ?? 0, answer: answer.headers });
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    };
    if (parked) parked.push(forward);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    arrived: (count) => (requests.length >= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count, resolve }))),
    hold() {
      const mine: Array<() => void> = (parked = []);
      return () => {
        if (parked === mine) parked = undefined;
        for (const forward of mine) forward();
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
