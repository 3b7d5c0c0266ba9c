import type { IncomingMessage, ServerResponse } from 'node:http';

/** Largest request body the sandbox reads, in bytes. */
export const MAX_BODY_BYTES = 1024 * 1024;
const EMPTY = Buffer.alloc(0);

/**
 * The body, or `undefined` when it is larger than `limit`. The cap holds while reading: a
 * declared Content-Length over it is refused unread, and a chunked body stops being kept at
 * the first byte over it (the rest is discarded as it arrives, so the 413 still reaches the client).
 */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer | undefined> | Buffer {
  // No Content-Length and no Transfer-Encoding: there is no body (a GET), nothing to wait for.
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
    req.resume();
    return EMPTY;
  }
  return new Promise((resolve, reject) => {
    if (Number(req.headers['content-length']) > limit) return void resolve(discard(req));
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      req.off('data', onData).off('end', onEnd);
      chunks.length = 0;
      resolve(discard(req));
    };
    const onEnd = () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

/** Reads and drops the rest of a refused body for up to 10 s, then drops the connection. */
function discard(req: IncomingMessage): undefined {
  req.resume();
  const timer = setTimeout(() => req.socket.destroy(), 10_000);
  timer.unref();
  req.once('end', () => clearTimeout(timer)).once('close', () => clearTimeout(timer));
  return undefined;
}

/** Writes a JSON answer with its length. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  const text = JSON.stringify(body);
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(text));
  res.writeHead(status, headers);
  res.end(text);
}

const headerList = /^\s*[!#$%&'*+.^`|~\w-]+(\s*,\s*[!#$%&'*+.^`|~\w-]+)*\s*$/;

/**
 * CORS for the data routes: any origin, the headers the page asks for, Retry-After and Date
 * readable (the client times the refresh of a token from a backend cache by the service's Date).
 */
export const corsHeaders = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Retry-After, Date' } as const;

/** Answers a CORS preflight for a data route, reflecting the requested headers when they are well-formed. */
export function answerPreflight(req: IncomingMessage, res: ServerResponse): void {
  const requested = req.headers['access-control-request-headers'];
  res.writeHead(204, {
    ...corsHeaders,
    'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
    'access-control-allow-headers': requested && headerList.test(requested) ? requested : 'authorization, content-type',
    'access-control-max-age': '600',
    vary: 'Origin, Access-Control-Request-Headers',
  });
  res.end();
}

/** 127.0.0.0/8 or ::1, also as IPv4-mapped IPv6. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

/** A server-sent event stream on an open response. */
export interface EventStream {
  send(event: string, data: unknown, id?: number): void;
}

/** Starts a `text/event-stream` answer, with a comment every 15 s so idle proxies keep it open. */
export function openEventStream(res: ServerResponse): EventStream {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
  res.write(': channel-sandbox\n\n');
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
  keepAlive.unref();
  res.on('close', () => clearInterval(keepAlive));
  return {
    send(event, data, id) {
      res.write((id === undefined ? '' : 'id: ' + id + '\n') + 'event: ' + event + '\ndata: ' + JSON.stringify(data) + '\n\n');
    },
  };
}

// The pattern core/redactor.ts masks (shared/redact.ts). Written out: importing it here would move it into a
// chunk shared with the browser entry, four more files in the install for one regex.
const jwtShaped = /eyJ[\w-]+\.[\w-]+\.[\w-]*/g;
const ANSWER_CHARS = 300;

/**
 * A receiver's answer as the sandbox reports it: whitespace collapsed to single spaces, at most
 * 300 characters (`…` marks a cut), JWT-shaped text masked, then what `redact` masks (before
 * the cut, which must not leave the start of a secret behind); undefined when empty.
 */
export function trimAnswer(text: string, redact: (text: string) => string = (t) => t): string | undefined {
  const flat = redact(text.replace(jwtShaped, '[token]')).replace(/\s+/g, ' ').trim();
  if (!flat) return undefined;
  return flat.length > ANSWER_CHARS ? flat.slice(0, ANSWER_CHARS - 1) + '…' : flat;
}

/**
 * A fetch Response's body as text, reading no further than `limit` bytes: `over` when the body
 * had more (the rest is not read, and the stream is cancelled). A connection cut mid-answer keeps
 * what arrived. Every answer the sandbox and the CLI read goes through here: a server that
 * answers without end costs `limit` bytes, not all the memory there is.
 */
export async function readLimited(response: Response, limit: number): Promise<{ text: string; over: boolean }> {
  const reader = response.body?.getReader();
  if (!reader) return { text: '', over: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size <= limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // A connection cut mid-answer: keep what arrived.
  } finally {
    if (size > limit) reader.cancel().catch(() => {});
  }
  return { text: Buffer.concat(chunks).subarray(0, limit).toString('utf8'), over: size > limit };
}

/** The start of a fetch Response's body as text (the rest is not read), for {@link trimAnswer}. */
export async function readAnswer(response: Response, limit = 4096): Promise<string> {
  return (await readLimited(response, limit)).text;
}

/** An absolute http(s) URL. */
export function isHttpUrl(value: unknown): value is string {
  try {
    return typeof value === 'string' && /^https?:$/.test(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** An HTTP header name (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^`|~\w-]+$/;
