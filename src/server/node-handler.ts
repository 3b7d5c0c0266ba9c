import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigError } from '../errors/ConfigError.js';

type FetchHandler = (request: Request) => Promise<Response>;

/** node:http's request as Express and friends extend it. */
export type NodeRequest = IncomingMessage & { body?: unknown; originalUrl?: string };

/**
 * Adapts a Fetch-style handler (e.g. `createWebhookHandler(...)`) to node:http and Express:
 * `http.createServer(toNodeHandler(handler))` or `app.post('/hook', toNodeHandler(handler))`.
 * The raw body is needed: mount it before `express.json()`, or use `express.raw({ type: 'application/json' })`.
 */
export function toNodeHandler(handler: FetchHandler) {
  return (req: NodeRequest, res: ServerResponse, next?: (error?: unknown) => void): void => {
    handle(handler, req, res).catch((error: unknown) => {
      if (next) return next(error);
      console.error(error instanceof Error ? error.message : error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'webhook adapter failed' }));
    });
  };
}

async function handle(handler: FetchHandler, req: NodeRequest, res: ServerResponse): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith(':') || value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const method = req.method || 'GET';
  let body: BodyInit | undefined;
  if (method !== 'GET' && method !== 'HEAD') {
    if (req.body instanceof Uint8Array || typeof req.body === 'string') {
      body = req.body as Uint8Array<ArrayBuffer> | string; // express.raw() / express.text()
    } else if (!req.readableEnded) {
      body = streamOf(req);
    } else if (typeof req.body === 'object' && req.body !== null) {
      throw new ConfigError(
        "the request body was already parsed by a JSON body parser, but the signature is over the raw bytes: mount the webhook route before express.json(), or use express.raw({ type: 'application/json' }) on it",
      );
    } else {
      throw new ConfigError('the request body stream was already read by another middleware; mount the webhook route before any body parser');
    }
  }
  const url = 'http://' + (req.headers.host || 'localhost') + (req.originalUrl || req.url || '/');
  const response = await handler(new Request(url, { method, headers, body, duplex: 'half' } as RequestInit));
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  res.end(Buffer.from(await response.arrayBuffer()));
}

// By hand rather than node:stream's Readable.toWeb: the edge build of this entry (Web Crypto,
// no node:* imports) carries this file too, and Workers cannot load node:stream.
function streamOf(req: IncomingMessage): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      req.on('data', (chunk: Uint8Array) => controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length)));
      req.on('end', () => controller.close());
      req.on('error', (error) => controller.error(error));
    },
    cancel() {
      req.destroy();
    },
  });
}
