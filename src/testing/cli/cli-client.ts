import { readLimited } from '../http-io.js';

/** What the CLI says when it stops: one line, and the exit code (2 for bad arguments). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Where the CLI finds a sandbox when neither --sandbox nor CHANNEL_SANDBOX_URL says. */
export const DEFAULT_SANDBOX_URL = 'http://127.0.0.1:8787';

// What the CLI reads from whatever answers at --sandbox, at most: a control answer (the largest,
// a push's outcome, is under 1 KB), and one event of a stream (a push carries its body, which a
// receiver takes up to 1 MiB of, escaped once more as JSON). Past either, the CLI stops reading
// and says so: before, `stats`, `events` and `check token-route --sandbox` against a server that
// answered without end grew without bound.
const MAX_ANSWER_BYTES = 1024 * 1024;
const MAX_EVENT_CHARS = 4 * 1024 * 1024;

const notRunning = (base: string, why: string) =>
  new CliError(`no sandbox at ${base} (${why}); start one with \`channel-sandbox start\`, or pass --sandbox URL or set CHANNEL_SANDBOX_URL`);

function reason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused';
  if ((error as Error).name === 'TimeoutError') return 'no answer within 30 s';
  return cause?.message ?? (error as Error).message;
}

/** One server-sent event block: its `event` and its `data` parsed as a JSON object; undefined for a comment. */
function parseEvent(block: string): { event: string; data: Record<string, unknown> } | undefined {
  let event = 'message';
  let data = '';
  for (const line of block.split('\n')) {
    if (line.startsWith('event: ')) event = line.slice(7);
    else if (line.startsWith('data: ')) data += line.slice(6);
  }
  if (!data) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CliError(`the event stream sent ${event} data that is not a JSON object: is it a channel-sandbox?`);
  return { event, data: value as Record<string, unknown> };
}

/** A client of one sandbox's control API (`/__sandbox/`). */
export function controlClient(base: string) {
  async function send(method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    try {
      return await fetch(base + '/__sandbox/' + route, {
        method,
        headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: route.startsWith('events') || route === 'listen' ? undefined : AbortSignal.timeout(30_000),
      });
    } catch (error) {
      throw notRunning(base, reason(error));
    }
  }

  async function json(response: Response): Promise<Record<string, unknown>> {
    const { text, over } = await readLimited(response, MAX_ANSWER_BYTES);
    if (over) throw new CliError(`${base} answered HTTP ${response.status} with more than 1 MiB: is it a channel-sandbox?`);
    let value: Record<string, unknown> | undefined;
    try {
      value = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Not the control API: something else listens there.
    }
    if (!value || typeof value !== 'object')
      throw new CliError(`${base} answered HTTP ${response.status} without the sandbox's JSON: is it a channel-sandbox?`);
    if (!response.ok) throw new CliError(typeof value.error === 'string' ? value.error : `${base} answered HTTP ${response.status}: is it a channel-sandbox?`);
    return value;
  }

  return {
    call: async (method: 'GET' | 'POST', route: string, body?: unknown) => json(await send(method, route, method === 'POST' ? (body ?? {}) : undefined)),
    /** Opens an event stream (`GET events`, or `POST listen` with a body) and yields its events until it ends. */
    async *stream(route: string, body?: unknown): AsyncGenerator<{ event: string; data: Record<string, unknown> }> {
      const response = await send(body === undefined ? 'GET' : 'POST', route, body, { accept: 'text/event-stream' });
      if (!response.ok || !response.body) await json(response);
      if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
        throw new CliError(`${base} did not answer with an event stream: is it a channel-sandbox?`);
      const decoder = new TextDecoder();
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let buffer = '';
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const parsed = parseEvent(block);
            if (parsed) yield parsed;
          }
          if (buffer.length > MAX_EVENT_CHARS) throw new CliError(`${base} sent an event of more than 4 MiB: is it a channel-sandbox?`);
        }
      } finally {
        reader.cancel().catch(() => {});
      }
    },
  };
}
