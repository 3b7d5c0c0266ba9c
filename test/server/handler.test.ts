import { describe, expect, test } from 'vitest';
import { ConfigError, createWebhookHandler, signWebhookBody, type WebhookErrorInfo } from '../../src/server-node.js';
import { PROJECT_BODY } from './implementations.js';

const secret = 'test_secret_123';
const url = 'http://partner.example/webhooks/channel';

async function push(body: string, init: { signature?: string | null; method?: string; headers?: Record<string, string> } = {}) {
  const signature = init.signature === undefined ? await signWebhookBody(body, secret) : init.signature;
  const headers: Record<string, string> = { 'content-type': 'application/json', ...init.headers };
  if (signature !== null) headers['X-Channel-Webhook-Signature'] = signature;
  return new Request(url, { method: init.method ?? 'POST', headers, body: init.method === 'GET' ? undefined : body });
}

function setup(callback: (event: unknown) => unknown = () => {}, extra: object = {}) {
  const errors: Array<[unknown, WebhookErrorInfo]> = [];
  const events: unknown[] = [];
  const handler = createWebhookHandler({
    secret,
    onLogisticsUpdated: async (event) => {
      events.push(event);
      await callback(event);
    },
    onError: (error, info) => errors.push([error, info]),
    ...extra,
  });
  return { handler, errors, events };
}

describe('createWebhookHandler status matrix', () => {
  test('200 only after the callback resolved', async () => {
    const order: string[] = [];
    const { handler } = setup(async () => {
      await new Promise((r) => setTimeout(r, 30));
      order.push('callback done');
    });
    const response = await handler(await push(PROJECT_BODY));
    order.push('response ' + response.status);
    expect(order).toEqual(['callback done', 'response 200']);
  });

  test.each([
    ['missing signature', () => push(PROJECT_BODY, { signature: null }), 401, 'signature'],
    ['wrong signature', () => push(PROJECT_BODY, { signature: 'ab'.repeat(32) }), 401, 'signature'],
    ['tampered body', async () => new Request(url, { method: 'POST', headers: { 'x-channel-webhook-signature': await signWebhookBody(PROJECT_BODY, secret) }, body: PROJECT_BODY.replace('SF', 'YT') }), 401, 'signature'],
    ['bad JSON', () => push('{"event":'), 400, 'payload'],
    ['bad shape', () => push('{"event":"logistics.updated","logistics":{}}'), 400, 'payload'],
    ['GET', () => push('', { method: 'GET' }), 405, 'method'],
    ['declared too large', () => push('{}', { headers: { 'content-length': String(2 * 1024 * 1024) } }), 413, 'size'],
  ])('%s -> %i', async (_label, make, status, stage) => {
    const { handler, errors, events } = setup();
    const response = await handler(await make());
    expect(response.status).toBe(status);
    expect(events).toHaveLength(0);
    expect(errors.map(([, info]) => info.stage)).toEqual([stage]);
  });

  test('405 names the allowed method', async () => {
    const response = await setup().handler(await push('', { method: 'GET' }));
    expect(response.headers.get('allow')).toBe('POST');
  });

  test('a streamed body over maxBodyBytes -> 413 without reading it all', async () => {
    const { handler } = setup(undefined, { maxBodyBytes: 1000 });
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(600));
        if (pulled > 100) controller.close();
      },
    });
    const response = await handler(new Request(url, { method: 'POST', body: stream, duplex: 'half' } as RequestInit));
    expect(response.status).toBe(413);
    expect(pulled).toBeLessThan(10);
  });

  test('the callback throws -> 500, reported through onError', async () => {
    const { handler, errors } = setup(() => {
      throw new Error('database down');
    });
    const response = await handler(await push(PROJECT_BODY));
    expect(response.status).toBe(500);
    expect(errors[0][1]).toMatchObject({ stage: 'callback', status: 500 });
    expect((errors[0][0] as Error).message).toBe('database down');
  });

  test('a slow callback is reported (the service stops waiting at 8 s), and still answered', async () => {
    const { handler, errors } = setup(() => new Promise((r) => setTimeout(r, 60)), { slowCallbackMs: 20 });
    const response = await handler(await push(PROJECT_BODY));
    expect(response.status).toBe(200);
    expect(errors.map(([, info]) => info.stage)).toEqual(['slow']);
    expect((errors[0][0] as Error).message).toMatch(/Acknowledge first and process in the background/);
  });

  test('another event type goes to onEvent; without onEvent it is acknowledged', async () => {
    const other: unknown[] = [];
    const { handler } = setup(undefined, { onEvent: (e: unknown) => other.push(e) });
    expect((await handler(await push('{"event":"order.created","x":1}'))).status).toBe(200);
    expect(other).toEqual([{ event: 'order.created', x: 1 }]);
    expect((await setup().handler(await push('{"event":"order.created"}'))).status).toBe(200);
  });

  test('the callback gets the raw body and its dedup key', async () => {
    let key = '';
    const handler = createWebhookHandler({
      secret,
      onLogisticsUpdated: async (_event, context) => {
        key = await context.dedupKey();
        expect(new TextDecoder().decode(context.rawBody)).toBe(PROJECT_BODY);
      },
    });
    expect((await handler(await push(PROJECT_BODY))).status).toBe(200);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
  });

  test('an empty secret is refused at creation unless allowUnsigned; then unsigned pushes pass', async () => {
    expect(() => createWebhookHandler({ secret: '', onLogisticsUpdated: () => {} })).toThrow(ConfigError);
    const handler = createWebhookHandler({ secret: '', allowUnsigned: true, onLogisticsUpdated: () => {} });
    expect((await handler(await push(PROJECT_BODY, { signature: null }))).status).toBe(200);
  });

  test('default reporting logs what failed, never the body or the secret', async () => {
    const lines: string[] = [];
    const original = console.warn;
    console.warn = (line: string) => lines.push(line);
    try {
      const handler = createWebhookHandler({ secret, onLogisticsUpdated: () => {} });
      await handler(await push(PROJECT_BODY, { signature: 'ab'.repeat(32) }));
    } finally {
      console.warn = original;
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[channel-sdk\] webhook signature -> 401/);
    expect(lines[0]).not.toContain(secret);
    expect(lines[0]).not.toContain('SO20240601001');
  });
});
