import { isChannelError } from '../errors/ChannelError.js';
import { ConfigError } from '../errors/ConfigError.js';
import type { LogisticsUpdatedEvent, UnknownWebhookEvent, WebhookEvent } from '../schemas/logistics.js';
import type { Secret } from './crypto.js';
import { isLogisticsUpdated, isSecret, SIGNATURE_HEADER, type ParseWebhookInput } from './webhook.js';

/** What a callback receives besides the event. */
export interface WebhookContext {
  /** The body exactly as received. */
  rawBody: Uint8Array;
  /** SHA-256 of the raw body: the same for a repeated push. */
  dedupKey(): Promise<string>;
  /** The incoming request. */
  request: Request;
}

/** Where handling stopped, for `onError`. */
export interface WebhookErrorInfo {
  stage: 'method' | 'size' | 'signature' | 'payload' | 'callback' | 'slow';
  /** The status answered (absent for `slow`, which is only a warning). */
  status?: number;
  /** Milliseconds the callback had taken, for `slow` and `callback`. */
  elapsedMs?: number;
}

/** Options of {@link createWebhookHandler}. */
export interface WebhookHandlerOptions {
  /** The webhook signing secret from the integration configuration. */
  secret: Secret;
  /** Accept unsigned pushes when `secret` is empty (the service then sends no signature). @default false */
  allowUnsigned?: boolean;
  /** Larger bodies get 413. @default 1048576 (1 MiB) */
  maxBodyBytes?: number;
  /** Called for each verified `logistics.updated` push; the handler answers 2xx only after it resolves. */
  onLogisticsUpdated: (event: LogisticsUpdatedEvent, context: WebhookContext) => unknown;
  /** Called for any other event type; without it such pushes are acknowledged and ignored. */
  onEvent?: (event: UnknownWebhookEvent, context: WebhookContext) => unknown;
  /** Rejections, callback errors and slow callbacks. @default logs to console.warn / console.error (never the body or secret) */
  onError?: (error: unknown, info: WebhookErrorInfo) => void;
  /** A callback slower than this is reported (the service stops waiting at 8 s). @default 7000 */
  slowCallbackMs?: number;
}

const json = (status: number, body: object, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

export function createHandlerFactory(
  parse: (input: ParseWebhookInput) => Promise<WebhookEvent>,
  dedupKey: (body: Uint8Array) => Promise<string>,
) {
  // Documented where it is exported: src/server.ts.
  return function createWebhookHandler(options: WebhookHandlerOptions): (request: Request) => Promise<Response> {
    const { secret, allowUnsigned = false, maxBodyBytes = 1024 * 1024, onLogisticsUpdated, onEvent, slowCallbackMs = 7000 } = options || ({} as WebhookHandlerOptions);
    if (typeof onLogisticsUpdated !== 'function') throw new ConfigError('createWebhookHandler needs onLogisticsUpdated: async (event) => { ... }');
    if (!isSecret(secret) && !allowUnsigned) {
      throw new ConfigError('createWebhookHandler: secret is empty; pass the webhook secret from the integration configuration, or allowUnsigned: true if it has none');
    }
    if (!(maxBodyBytes > 0)) throw new ConfigError('maxBodyBytes must be a positive number of bytes');
    const report =
      options.onError ||
      ((error: unknown, info: WebhookErrorInfo) => {
        const text = '[channel-sdk] webhook ' + info.stage + (info.status ? ' -> ' + info.status : '') + ': ' + (error instanceof Error ? error.message : String(error));
        (info.stage === 'callback' ? console.error : console.warn)(text);
      });

    return async (request) => {
      if (request.method !== 'POST') {
        report(new Error('method ' + request.method + ' is not allowed; the service POSTs'), { stage: 'method', status: 405 });
        return json(405, { error: 'method not allowed' }, { allow: 'POST' });
      }
      const rawBody = await readLimited(request, maxBodyBytes);
      if (!rawBody) {
        report(new Error('body larger than maxBodyBytes (' + maxBodyBytes + ')'), { stage: 'size', status: 413 });
        return json(413, { error: 'payload too large' });
      }
      let event: WebhookEvent;
      try {
        event = await parse({ body: rawBody, signature: request.headers.get(SIGNATURE_HEADER), secret, allowUnsigned });
      } catch (error) {
        const signature = isChannelError(error) && error.code === 'WEBHOOK_SIGNATURE_ERROR';
        report(error, { stage: signature ? 'signature' : 'payload', status: signature ? 401 : 400 });
        return json(signature ? 401 : 400, { error: signature ? 'invalid signature' : 'invalid payload' });
      }
      const context: WebhookContext = { rawBody, dedupKey: () => dedupKey(rawBody), request };
      const started = Date.now();
      const slow = setTimeout(
        () => report(new Error('the callback has run ' + slowCallbackMs + ' ms; the service stops waiting at 8 s and records a failure. Acknowledge first and process in the background (enqueue, then return)'), { stage: 'slow', elapsedMs: Date.now() - started }),
        slowCallbackMs,
      );
      try {
        if (isLogisticsUpdated(event)) await onLogisticsUpdated(event, context);
        else if (onEvent) await onEvent(event as UnknownWebhookEvent, context);
      } catch (error) {
        report(error, { stage: 'callback', status: 500, elapsedMs: Date.now() - started });
        return json(500, { error: 'handler failed' });
      } finally {
        clearTimeout(slow);
      }
      return json(200, { ok: true });
    };
  };
}

/** The body as bytes, or undefined when it exceeds `limit` (read no further than that). */
async function readLimited(request: Request, limit: number): Promise<Uint8Array | undefined> {
  const declared = Number(request.headers.get('content-length'));
  if (declared > limit) return undefined;
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}
