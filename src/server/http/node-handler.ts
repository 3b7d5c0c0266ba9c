import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BodyTicket } from './body-guard.js';
import { concat, ROUTE_CORE, run, type BodyResult, type Core, type Framework, type Incoming, type Outgoing } from './route.js';
import { fail } from '../../shared/check.js';

// No node:* import at run time: the edge build of the server entry (Web Crypto, for workers)
// carries this file too. Buffer is used when the runtime has it, for allocUnsafe.

/** node:http's request as Express, Next.js and friends extend it. */
export type NodeRequest = IncomingMessage & { body?: unknown; rawBody?: unknown; originalUrl?: string };

/** The parts of a Koa context the adapter uses (Koa 2 and 3, @koa/router). */
export interface KoaContextLike {
  req: IncomingMessage;
  res: ServerResponse;
  request: { body?: unknown };
  status: number;
  body: unknown;
  set(field: string, value: string): void;
}

/** The parts of a Fastify request and reply the adapter uses (Fastify 4 and 5). */
export interface FastifyRequestLike {
  raw: IncomingMessage;
  body?: unknown;
}
export interface FastifyReplyLike {
  raw: ServerResponse;
  code(statusCode: number): unknown;
  header(name: string, value: string): unknown;
  send(payload?: unknown): unknown;
}

/**
 * A route served the node:http way. One function, recognised by its arguments:
 * a node:http listener, Express or Connect middleware, a Next.js Pages Router API route,
 * Koa middleware (`router.post(path, handler)`), or a Fastify route handler.
 */
export interface NodeHandler {
  /** node:http, Express, Connect, Next.js Pages Router (`export default`). */
  (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void;
  /** Koa / @koa/router middleware: answers through `ctx.status` and `ctx.body`. */
  (ctx: KoaContextLike, next?: () => Promise<unknown>): Promise<void>;
  /** Fastify route handler: answers through `reply`. */
  (request: FastifyRequestLike, reply: FastifyReplyLike): Promise<unknown>;
}

/**
 * Serves a route from `createWebhookHandler` or `createTokenRoute` on node:http, Express,
 * Next.js Pages Router, Koa or Fastify. The body is read straight from the request stream into
 * one buffer, with the size cap enforced while reading; no Fetch `Request` is built.
 * @example
 * const webhook = toNodeHandler(createWebhookHandler({ secret, onLogisticsUpdated }));
 * http.createServer(webhook);                    // node:http
 * app.post('/webhooks/channel', webhook);        // Express, before express.json()
 * router.post('/webhooks/channel', webhook);     // Koa, before the body parser
 */
export function toNodeHandler(route: { readonly [ROUTE_CORE]: Core }): NodeHandler {
  const core = route ? route[ROUTE_CORE] : undefined;
  if (typeof core !== 'function') {
    fail('toNodeHandler takes what createWebhookHandler(...) or createTokenRoute(...) returns');
  }
  function handler(a: unknown, b?: unknown): void | Promise<unknown> {
    if (isFastifyReply(b)) {
      const request = a as FastifyRequestLike;
      return run(core!, new NodeIncoming(request.raw, request, 'fastify', request.body), (out) => {
        release(request.raw);
        return sendFastify(b, out);
      });
    }
    if (isKoaContext(a)) {
      return run(core!, new NodeIncoming(a.req, a, 'koa', a.request.body), (out) => {
        release(a.req);
        sendKoa(a, out);
      });
    }
    const req = a as NodeRequest;
    const res = b as ServerResponse & { revalidate?: unknown };
    const framework: Framework = typeof res?.revalidate === 'function' ? 'next-pages' : (req as { app?: unknown })?.app ? 'express' : 'node';
    void run(core!, new NodeIncoming(req, req, framework, req?.body, req?.rawBody), (out) => {
      release(req);
      send(res, out);
    });
  }
  return handler as NodeHandler;
}

const isFastifyReply = (value: unknown): value is FastifyReplyLike =>
  typeof value === 'object' && value !== null && typeof (value as { hijack?: unknown }).hijack === 'function' && 'raw' in value;

const isKoaContext = (value: unknown): value is KoaContextLike =>
  typeof value === 'object' && value !== null && 'req' in value && 'res' in value && 'request' in value && 'response' in value;

const HOST = /^(?:\[[0-9a-fA-F:.]+\]|[\w.~!$&'()*+,;=%-]*)(?::\d{0,5})?$/;

// Bytes and time an unread rest of a refused body may still take before the connection is
// dropped: reading it lets the client see the answer (closing on unread data would reset it).
const DRAIN_BYTES = 8 * 1024 * 1024;
const DRAIN_MS = 5000;

const allocate: (size: number) => Uint8Array = typeof Buffer === 'function' ? (size) => Buffer.allocUnsafe(size) : (size) => new Uint8Array(size);

class NodeIncoming implements Incoming {
  readonly method: string;
  readonly malformedHost: boolean;
  constructor(
    readonly req: NodeRequest,
    readonly native: unknown,
    readonly framework: Framework,
    private readonly parsedBody?: unknown,
    private readonly rawBody?: unknown,
  ) {
    this.method = req?.method ? req.method.toUpperCase() : 'GET';
    const host = req?.headers?.host;
    this.malformedHost = host !== undefined && !HOST.test(host);
  }

  header(name: string): string | undefined {
    const value = this.req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  }

  query(): string {
    const url = this.req.url || '';
    const start = url.indexOf('?');
    return start < 0 ? '' : url.slice(start + 1);
  }

  parsed(): unknown {
    return this.parsedBody instanceof Uint8Array ? undefined : this.parsedBody;
  }

  body(limit: number, ticket?: BodyTicket): Promise<BodyResult> {
    // express.raw(), Fastify's parseAs: 'buffer', or express.json({ verify }) keeping req.rawBody:
    // read by the framework's parser, within its limits and deadlines, not ours.
    const given = this.parsedBody instanceof Uint8Array ? this.parsedBody : this.rawBody instanceof Uint8Array ? this.rawBody : undefined;
    if (given) return Promise.resolve(given.length > limit ? TOO_LARGE : { ok: true, bytes: given });
    return readNodeBody(this.req, limit, ticket);
  }
}

const TOO_LARGE: BodyResult = { ok: false, reason: 'too-large' };

function readNodeBody(req: IncomingMessage, limit: number, ticket?: BodyTicket): Promise<BodyResult> {
  if (req.readableEnded || req.readableDidRead || req.readableFlowing) return Promise.resolve({ ok: false, reason: 'consumed' });
  const declared = req.headers['content-length'] === undefined ? -1 : Number(req.headers['content-length']);
  if (declared > limit) {
    drain(req);
    return Promise.resolve(TOO_LARGE);
  }
  return new Promise((resolve) => {
    // Chunks, then one copy at the end (none for a single chunk). Not a buffer of the declared
    // length up front: measured with 100 concurrent 1 MiB pushes, that held more memory, and it
    // would let a client that sends headers only make the server reserve maxBodyBytes each.
    const chunks: Uint8Array[] = [];
    let size = 0;
    const finish = (result: BodyResult) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (ticket) ticket.onStop = undefined;
      resolve(result);
    };
    const onData = (chunk: Uint8Array) => {
      if (size + chunk.length > limit) {
        finish(TOO_LARGE);
        drain(req);
        return;
      }
      if (ticket && !ticket.take(chunk.length)) return stop('busy');
      chunks.push(chunk);
      size += chunk.length;
    };
    // Past the deadline or evicted from the byte budget: the chunks go now; the answer (408 or
    // 503) closes the connection, and what the client still sends meanwhile is read and dropped.
    const stop = (reason: 'timeout' | 'busy') => {
      chunks.length = 0;
      finish({ ok: false, reason });
      drain(req);
    };
    if (ticket) ticket.onStop = stop;
    const onEnd = () => {
      ticket?.read();
      finish({ ok: true, bytes: concat(chunks, size, allocate) });
    };
    const onError = (error: unknown) => finish({ ok: false, reason: 'unreadable', error });
    const onClose = () => finish({ ok: false, reason: 'unreadable', error: new Error('the connection closed before the body was complete') });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** Reads and discards what is left of a refused body, within bounds, so the answer is seen. */
function drain(req: IncomingMessage): void {
  if (req.readableEnded || req.destroyed) return;
  let seen = 0;
  const stop = () => {
    clearTimeout(timer);
    req.off('data', count);
    req.destroy();
  };
  const count = (chunk: Uint8Array) => {
    seen += chunk.length;
    if (seen > DRAIN_BYTES) stop();
  };
  const timer = setTimeout(stop, DRAIN_MS);
  (timer as { unref?: () => void }).unref?.();
  req.on('data', count);
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.on('error', () => {});
  req.resume();
}

/** A body left unread (refused before reading, or a GET) is drained within bounds. */
function release(req: IncomingMessage | undefined): void {
  if (req && typeof req.listenerCount === 'function' && !req.readableEnded && req.listenerCount('data') === 0) drain(req);
}

function send(res: ServerResponse, out: Outgoing): void {
  if (!res || typeof res.writeHead !== 'function' || res.headersSent || res.writableEnded) return;
  if (out.status === 204) return void res.writeHead(204, out.headers).end(); // no body (a CORS preflight's answer)
  const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': byteLength(out.body) };
  if (out.headers) Object.assign(headers, out.headers);
  res.writeHead(out.status, headers);
  res.end(out.body);
}

const encoder = new TextEncoder();
const byteLength: (text: string) => number = typeof Buffer === 'function' ? (text) => Buffer.byteLength(text) : (text) => encoder.encode(text).length;

function sendKoa(ctx: KoaContextLike, out: Outgoing): void {
  ctx.status = out.status;
  ctx.set('content-type', 'application/json');
  if (out.headers) for (const name of Object.keys(out.headers)) ctx.set(name, out.headers[name]);
  ctx.body = out.body;
}

function sendFastify(reply: FastifyReplyLike, out: Outgoing): unknown {
  reply.code(out.status);
  reply.header('content-type', 'application/json');
  if (out.headers) for (const name of Object.keys(out.headers)) reply.header(name, out.headers[name]);
  return reply.send(out.body);
}
