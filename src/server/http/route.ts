// One core per route (the webhook handler, the token route) behind two front doors: the Fetch
// one here (a `Request`, or Hono's context, in; a `Response` out) and the node:http one in
// node-handler.ts (node:http, Express, Next.js Pages Router, Koa, Fastify). Both describe the
// request as an `Incoming`, run the same core, and write its `Outgoing` their own way, so the
// statuses and messages cannot drift apart between runtimes.
import { messageIn, type MessageStyle } from '../../shared/message.js';
import type { BodyStop, BodyTicket } from './body-guard.js';

/** Which front door a request came through; it picks the advice when a body was already read. */
export type Framework = 'fetch' | 'next-app' | 'hono' | 'node' | 'express' | 'next-pages' | 'koa' | 'fastify';

export type BodyResult = { ok: true; bytes: Uint8Array } | { ok: false; reason: 'too-large' | 'consumed' | 'unreadable' | BodyStop; error?: unknown };

/** What a core reads from a request, whatever the framework. */
export interface Incoming {
  readonly framework: Framework;
  /** Upper-case method. */
  readonly method: string;
  /** What the framework handed over: a Request, Hono's context, Express's req, Koa's ctx, Fastify's request. */
  readonly native: unknown;
  /** A Host header no URL parser would accept (node:http front door only). */
  readonly malformedHost: boolean;
  /** A request header; `name` is lower-case. */
  header(name: string): string | undefined;
  /** The query string without `?` ('' when none). */
  query(): string;
  /** `host[:port]` of the URL the request was made to, when the front door knows it (Fetch); node:http has the Host header. */
  authority?(): string | undefined;
  /** A body the framework already parsed (express.json(), koa-bodyparser, Fastify, Next.js), if any. */
  parsed(): unknown;
  /** The body as bytes, reading no further than `limit`; with a ticket, within its deadline and byte budget. */
  body(limit: number, ticket?: BodyTicket): Promise<BodyResult>;
}

/** What a core answers: always JSON. */
export interface Outgoing {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

/** Never rejects: every failure is an `Outgoing`. */
export type Core = (incoming: Incoming) => Promise<Outgoing>;

/** Where a route keeps its core, for `toNodeHandler`. */
export const ROUTE_CORE: unique symbol = Symbol.for('channel-sdk.route-core');

/** A Hono context, or anything else that carries the Fetch request as `req.raw`. */
export interface FetchContext {
  req: { raw: Request };
}

/**
 * A Fetch-style route: `(request: Request) => Promise<Response>` for Next.js App Router,
 * Deno.serve, Bun.serve and workers. It also takes Hono's context (`app.post(path, route)`),
 * and `toNodeHandler(route)` serves it on node:http, Express, Koa and Fastify.
 */
export interface FetchRoute {
  (request: Request): Promise<Response>;
  (context: FetchContext): Promise<Response>;
  readonly [ROUTE_CORE]: Core;
}

const JSON_TYPE = 'application/json';

/** How a log line words an error: without the package prefix the line already carries. */
export const unprefixed: MessageStyle = { unprefixed: true };

/** JSON text of a small constant answer. */
export const answer = (status: number, value: object, headers?: Record<string, string>): Outgoing =>
  headers ? { status, body: JSON.stringify(value), headers } : { status, body: JSON.stringify(value) };

/**
 * The answers to a body that the body guard stopped, for a route whose deadline is
 * `bodyTimeoutMs`: 408 past the deadline, 503 with Retry-After when the byte budget is full.
 * Both close the connection: a client that stalls its body is not kept for another request.
 */
export function stoppedBodyAnswers(bodyTimeoutMs: number): Record<BodyStop, Outgoing> {
  return {
    timeout: answer(408, { error: 'the body did not arrive in time' }, { connection: 'close' }),
    busy: answer(
      503,
      { error: 'too many request bodies in flight; retry later' },
      { 'retry-after': String(Math.ceil(bodyTimeoutMs / 1000)), connection: 'close' },
    ),
  };
}

export function fetchRoute(core: Core): FetchRoute {
  const route = (input: unknown): Promise<Response> => {
    const incoming = fetchIncoming(input);
    if (!incoming) {
      return Promise.resolve(
        toResponse(
          answer(500, {
            error: 'call the route with a Fetch Request (or a Hono context); for node:http, Express, Koa or Fastify wrap it: toNodeHandler(route)',
          }),
        ),
      );
    }
    return run(core, incoming, toResponse);
  };
  Object.defineProperty(route, ROUTE_CORE, { value: core });
  return route as FetchRoute;
}

const INTERNAL = answer(500, { error: 'internal error in channel-sdk; see the server log' });

/** Runs a core and hands its answer to `deliver`; a bug in the core becomes a 500 and a console.error line, never a rejection. */
export function run<T>(core: Core, incoming: Incoming, deliver: (out: Outgoing) => T): Promise<T> {
  try {
    return core(incoming).then(deliver, (error: unknown) => deliver(internal(error)));
  } catch (error) {
    return Promise.resolve(internal(error)).then(deliver);
  }
}

function internal(error: unknown): Outgoing {
  console.error('[channel-sdk] ' + messageIn(unprefixed, error));
  return INTERNAL;
}

function toResponse(out: Outgoing): Response {
  // 204 (a CORS preflight's answer) has no body, and a Response refuses one.
  if (out.status === 204) return new Response(null, { status: 204, headers: out.headers });
  const headers: Record<string, string> = { 'content-type': JSON_TYPE, ...out.headers };
  return new Response(out.body, { status: out.status, headers });
}

const isRequest = (value: unknown): value is Request =>
  typeof value === 'object' && value !== null && typeof (value as Request).method === 'string' && typeof (value as Request).headers?.get === 'function';

function fetchIncoming(input: unknown): Incoming | undefined {
  if (isRequest(input)) return new FetchIncoming(input, input, 'nextUrl' in input ? 'next-app' : 'fetch');
  const raw = (input as FetchContext | null)?.req?.raw;
  if (isRequest(raw)) return new FetchIncoming(raw, input, 'hono');
  return undefined;
}

class FetchIncoming implements Incoming {
  readonly method: string;
  readonly malformedHost = false;
  constructor(
    private readonly request: Request,
    readonly native: unknown,
    readonly framework: Framework,
  ) {
    this.method = request.method.toUpperCase();
  }

  header(name: string): string | undefined {
    const value = this.request.headers.get(name);
    return value === null ? undefined : value;
  }

  query(): string {
    const url = this.request.url;
    const start = url.indexOf('?');
    if (start < 0) return '';
    const hash = url.indexOf('#', start);
    return url.slice(start + 1, hash < 0 ? undefined : hash);
  }

  authority(): string | undefined {
    return /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(this.request.url)?.[1];
  }

  parsed(): unknown {
    return undefined;
  }

  body(limit: number, ticket?: BodyTicket): Promise<BodyResult> {
    return readFetchBody(this.request, limit, ticket);
  }
}

async function readFetchBody(request: Request, limit: number, ticket?: BodyTicket): Promise<BodyResult> {
  if (Number(request.headers.get('content-length')) > limit) return { ok: false, reason: 'too-large' };
  if (request.bodyUsed) return { ok: false, reason: 'consumed' };
  const stream = request.body;
  if (!stream) return { ok: true, bytes: new Uint8Array(0) };
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = stream.getReader();
  } catch (error) {
    return { ok: false, reason: 'consumed', error }; // locked by another reader
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  // A stopped body (deadline, or evicted from the byte budget) is left unread, not cancelled:
  // cancelling may destroy the connection before the 408 or 503 is written.
  const stopped = ticket && new Promise<BodyStop>((resolve) => (ticket.onStop = resolve));
  try {
    for (;;) {
      const next = reader.read();
      const step = stopped ? await Promise.race([next, stopped]) : await next;
      if (typeof step === 'string') {
        next.catch(() => {});
        return { ok: false, reason: step };
      }
      const { done, value } = step;
      if (done) break;
      size += value.length;
      if (size > limit) {
        reader.cancel().catch(() => {});
        return { ok: false, reason: 'too-large' };
      }
      if (ticket && !ticket.take(value.length)) return { ok: false, reason: 'busy' };
      chunks.push(value);
    }
  } catch (error) {
    return { ok: false, reason: 'unreadable', error };
  }
  ticket?.read();
  return { ok: true, bytes: concat(chunks, size) };
}

/** One buffer from chunks; a single chunk is returned as it is. */
export function concat(chunks: readonly Uint8Array[], size: number, allocate: (size: number) => Uint8Array = (n) => new Uint8Array(n)): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = allocate(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/** What to change when a body parser read the body before the route: one line per framework. */
export const CONSUMED_ADVICE: Record<Framework, string> = {
  express:
    "Express: a body parser (express.json(), express.text()...) read it first. Register the webhook route before the parser: app.post('/webhooks/channel', toNodeHandler(webhook)) above app.use(express.json())",
  'next-pages':
    'Next.js Pages Router: Next parsed the body of this API route. Turn its parser off in the route file: export const config = { api: { bodyParser: false } }',
  koa: 'Koa: a body parser (koa-bodyparser, @koa/bodyparser) read it first. Use the router holding the webhook route before the parser (app.use(router.routes()) above app.use(bodyParser())), or set ctx.disableBodyParser = true for this path before it runs',
  fastify:
    "Fastify: its content-type parser read it first. Register the route in its own plugin that leaves the body unread: fastify.register(async (channel) => { channel.removeAllContentTypeParsers(); channel.addContentTypeParser('*', (_request, _payload, done) => done(null)); channel.post('/webhooks/channel', toNodeHandler(webhook)); })",
  hono: "Hono: a middleware read it first (c.req.json(), c.req.text(), validator('json')). Keep body-reading middleware off this path: register the webhook route before it, or scope it (app.use('/api/*', ...))",
  'next-app': 'Next.js App Router: something read request.json() / text() first. Export the handler as the route itself: export const POST = handler',
  fetch: 'Fetch: the Request body was already read (bodyUsed) or locked by another reader. Pass the Request to the handler untouched, before anything reads it',
  node: 'node:http: another listener read the request stream first. Hand the handler the untouched request, before any body parser',
};
