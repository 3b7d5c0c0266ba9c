import * as fc from 'fast-check';
import { afterAll, describe, expect, test } from 'vitest';
import { nodeCrypto } from '../../../src/server/crypto/node.js';
import { webCrypto } from '../../../src/server/crypto/web.js';
import { serverApi } from '../../../src/server/api.js';
import { ConfigError, signWebhookBody, type WebhookErrorInfo, type WebhookHandlerOptions } from '../../../src/server-node.js';
import { doors, type Door, type Sent } from '../http/doors.js';
import { captureConsole } from '../helpers.js';
import { PROJECT_BODY, vectors } from '../implementations.js';

const secret = 'test_secret_123';
const sign = (body: string | Uint8Array, key: string | Uint8Array = secret) => signWebhookBody(body, key);
const bytes = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))));
const signed = async (body: string | Uint8Array, extra: Partial<Sent> = {}): Promise<Sent> => ({
  body,
  headers: { 'content-type': 'application/json', 'x-channel-webhook-signature': await sign(body) },
  ...extra,
});

function setup(create: (typeof cryptos)[number][1], options: Partial<WebhookHandlerOptions> = {}) {
  const reported: Array<[unknown, WebhookErrorInfo]> = [];
  const received: unknown[] = [];
  const handler = create({
    secret,
    onLogisticsUpdated: (event) => void received.push(event.logistics.order_no),
    onEvent: (event) => void received.push(event.event),
    onError: (error, info) => void reported.push([error, info]),
    ...options,
  });
  return { handler, reported, received, stages: () => reported.map(([, info]) => info.stage) };
}

const cryptos = [
  ['node:crypto', serverApi(nodeCrypto).createWebhookHandler],
  ['Web Crypto', serverApi(webCrypto).createWebhookHandler],
] as const;

// One status matrix, every front door, both crypto builds: the answers must be identical.
describe.each(doors)('webhook status matrix through %s', (_door, open) => {
  describe.each(cryptos)('%s', (_crypto, create) => {
    const cases: Array<[string, number, () => Promise<Sent>, unknown, string[], unknown[], Partial<WebhookHandlerOptions>?]> = [
      ['signed push', 200, () => signed(PROJECT_BODY), { ok: true }, [], ['SO20240601001']],
      [
        'upper-case signature',
        200,
        async () => ({ body: PROJECT_BODY, headers: { 'x-channel-webhook-signature': (await sign(PROJECT_BODY)).toUpperCase() } }),
        { ok: true },
        [],
        ['SO20240601001'],
      ],
      ['missing signature', 401, async () => ({ body: PROJECT_BODY }), { error: 'invalid signature' }, ['signature'], []],
      [
        'signature not 64 hex',
        401,
        async () => ({ body: PROJECT_BODY, headers: { 'x-channel-webhook-signature': 'sha256=' + (await sign(PROJECT_BODY)) } }),
        { error: 'invalid signature' },
        ['signature'],
        [],
      ],
      [
        'wrong signature',
        401,
        async () => ({ body: PROJECT_BODY, headers: { 'x-channel-webhook-signature': 'ab'.repeat(32) } }),
        { error: 'invalid signature' },
        ['signature'],
        [],
      ],
      [
        'tampered body',
        401,
        async () => ({ body: PROJECT_BODY.replace('SF', 'YT'), headers: { 'x-channel-webhook-signature': await sign(PROJECT_BODY) } }),
        { error: 'invalid signature' },
        ['signature'],
        [],
      ],
      ['signed, not JSON', 400, () => signed('{"event":'), { error: 'invalid payload' }, ['payload'], []],
      ['signed, not UTF-8', 400, () => signed(bytes('{"event":"logistics.updated","x":"', [0xc3, 0x28], '"}')), { error: 'invalid payload' }, ['payload'], []],
      ['signed, UTF-8 BOM before the JSON', 200, () => signed(bytes([0xef, 0xbb, 0xbf], PROJECT_BODY)), { ok: true }, [], ['SO20240601001']],
      ['signed, empty body', 400, () => signed(''), { error: 'invalid payload' }, ['payload'], []],
      ['signed, wrong shape', 400, () => signed('{"event":"logistics.updated","logistics":{}}'), { error: 'invalid payload' }, ['payload'], []],
      ['another event type', 200, () => signed('{"event":"order.created","x":1}'), { ok: true }, [], ['order.created']],
      ['GET', 405, async () => ({ method: 'GET' }), { error: 'method not allowed' }, ['method'], []],
      ['PUT', 405, () => signed(PROJECT_BODY, { method: 'PUT' }), { error: 'method not allowed' }, ['method'], []],
      [
        '2 MiB body',
        413,
        () => signed('{"event":"logistics.updated","pad":"' + 'x'.repeat(2 * 1024 * 1024) + '"}'),
        { error: 'payload too large' },
        ['size'],
        [],
      ],
      [
        'callback throws',
        500,
        () => signed(PROJECT_BODY),
        { error: 'handler failed' },
        ['callback'],
        [],
        { onLogisticsUpdated: () => Promise.reject(new Error('database down')) },
      ],
      [
        'secret function returns nothing (fails closed, even unsigned)',
        500,
        async () => ({ body: PROJECT_BODY }),
        { error: 'webhook secret not configured' },
        ['config'],
        [],
        { secret: () => undefined },
      ],
      ['secret function returns the secret', 200, () => signed(PROJECT_BODY), { ok: true }, [], ['SO20240601001'], { secret: async () => secret }],
      [
        'empty secret with allowUnsigned, unsigned push',
        200,
        async () => ({ body: PROJECT_BODY }),
        { ok: true },
        [],
        ['SO20240601001'],
        { secret: '', allowUnsigned: true },
      ],
    ];

    let door: Door | undefined;
    afterAll(() => door?.close());

    test.each(cases)('%s -> %i', async (_label, status, make, json, stages, received, options) => {
      const route = setup(create, options);
      door = await open(route.handler);
      const answer = await door.send(await make());
      await door.close();
      door = undefined;
      expect(answer.status).toBe(status);
      expect(answer.json).toEqual(json);
      expect(answer.headers['content-type']).toBe('application/json');
      expect(answer.headers.allow).toBe(status === 405 ? 'POST' : undefined);
      expect(route.stages()).toEqual(stages);
      expect(route.received).toEqual(received);
    });

    // The known-answer vectors through the whole handler: verified bodies that are not pushes
    // get 400 (past the signature), a one-byte change of the signature 401.
    test('the webhook vector table: each verifies (400 not a push / 200 the project body); a changed signature is 401', async () => {
      for (const vector of vectors) {
        const route = setup(create, { secret: vector.key });
        door = await open(route.handler);
        const good = await door.send({ body: vector.body, headers: { 'x-channel-webhook-signature': vector.hex } });
        const upper = await door.send({ body: vector.body, headers: { 'x-channel-webhook-signature': vector.hex.toUpperCase() } });
        const flipped = await door.send({
          body: vector.body,
          headers: { 'x-channel-webhook-signature': (vector.hex[0] === 'a' ? 'b' : 'a') + vector.hex.slice(1) },
        });
        await door.close();
        door = undefined;
        const expected = vector.body === PROJECT_BODY ? 200 : 400;
        expect([vector.name, good.status, upper.status, flipped.status]).toEqual([vector.name, expected, expected, 401]);
      }
    });
  });
});

describe('createWebhookHandler', () => {
  const create = cryptos[0][1];
  const post = async (body = PROJECT_BODY) => new Request('http://partner.example/hook', { method: 'POST', ...(await signed(body)) } as RequestInit);

  test('200 only after the callback resolved', async () => {
    const order: string[] = [];
    const { handler } = setup(create, {
      onLogisticsUpdated: async () => {
        await new Promise((r) => setTimeout(r, 30));
        order.push('callback done');
      },
    });
    order.push('response ' + (await handler(await post())).status);
    expect(order).toEqual(['callback done', 'response 200']);
  });

  test('a secret function is called at the first request, not at creation; one that throws is asked again', async () => {
    let calls = 0;
    const route = setup(create, {
      secret: () => {
        calls++;
        if (calls === 1) throw new Error('vault unreachable');
        return secret;
      },
    });
    expect(calls).toBe(0);
    expect((await route.handler(await post())).status).toBe(500);
    expect(route.reported[0][1]).toMatchObject({ stage: 'config', level: 'error', status: 500 });
    expect((await route.handler(await post())).status).toBe(200);
    expect((await route.handler(await post())).status).toBe(200);
    expect(calls).toBe(2);
  });

  test('an empty static secret is refused at creation, with the function form in the message', () => {
    expect(() => create({ secret: '', onLogisticsUpdated: () => {} })).toThrow(ConfigError);
    expect(() => create({ secret: '', onLogisticsUpdated: () => {} })).toThrow(/secret: \(\) => process\.env\.CHANNEL_WEBHOOK_SECRET/);
  });

  test('a request without a well-formed signature is refused before its body is read', async () => {
    const { handler } = setup(create);
    for (const signature of [undefined, 'not-hex']) {
      const request = new Request('http://partner.example/hook', {
        method: 'POST',
        headers: signature ? { 'x-channel-webhook-signature': signature } : {},
        body: PROJECT_BODY,
      });
      expect((await handler(request)).status).toBe(401);
      expect([request.bodyUsed, request.body!.locked]).toEqual([false, false]);
    }
  });

  test('a streamed body over maxBodyBytes -> 413 without reading it all', async () => {
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(600));
        if (pulled > 100) controller.close();
      },
    });
    const { handler } = setup(create, { maxBodyBytes: 1000 });
    const headers = { 'x-channel-webhook-signature': 'ab'.repeat(32) };
    const response = await handler(new Request('http://partner.example/hook', { method: 'POST', headers, body: stream, duplex: 'half' } as RequestInit));
    expect(response.status).toBe(413);
    expect(pulled).toBeLessThan(10);
  });

  test('a body that errors while read -> 400, reported as body', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(5));
        controller.error(new Error('connection reset'));
      },
    });
    const route = setup(create);
    const headers = { 'x-channel-webhook-signature': 'ab'.repeat(32) };
    const response = await route.handler(new Request('http://partner.example/hook', { method: 'POST', headers, body: stream, duplex: 'half' } as RequestInit));
    expect(response.status).toBe(400);
    expect(route.stages()).toEqual(['body']);
  });

  test.each([
    ['already read (bodyUsed)', async (r: Request) => void (await r.text()), /Fetch: .*Pass the Request to the handler untouched/],
    ['locked by another reader', async (r: Request) => void r.body!.getReader(), /Fetch: .*locked by another reader/],
  ])('a Request body %s -> 500 with advice, reported through onError, never a rejection', async (_label, spoil, advice) => {
    const route = setup(create);
    const request = await post();
    await spoil(request);
    const response = await route.handler(request);
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: string }).error).toMatch(advice);
    expect(route.reported[0][1]).toMatchObject({ stage: 'body', level: 'error', status: 500 });
  });

  test("a Hono context is accepted as is; a body its middleware read gets Hono's advice", async () => {
    const route = setup(create);
    expect((await route.handler({ req: { raw: await post() } })).status).toBe(200);
    const raw = await post();
    await raw.json();
    const response = await route.handler({ req: { raw } });
    expect(((await response.json()) as { error: string }).error).toMatch(/^the push body was read by something else .* Hono: /);
  });

  test("a Next.js App Router request (NextRequest has nextUrl) read first gets Next's advice", async () => {
    const route = setup(create);
    const request = Object.assign(await post(), { nextUrl: new URL('http://partner.example/hook') });
    await request.text();
    const response = await route.handler(request);
    expect(((await response.json()) as { error: string }).error).toMatch(/Next\.js App Router: .*export const POST = handler/);
  });

  test('never rejects, whatever it is called with', async () => {
    const { handler } = setup(create);
    await fc.assert(
      fc.asyncProperty(fc.anything(), async (input) => {
        const response = await (handler as (x: unknown) => Promise<Response>)(input);
        return response instanceof Response && response.status === 500;
      }),
      { numRuns: 100 },
    );
  });

  test('the callback gets the raw body, its dedup key, and what the framework handed over', async () => {
    let seen: { key: string; text: string; request: unknown } | undefined;
    const request = await post();
    const handler = create({
      secret,
      onLogisticsUpdated: async (_event, context) => {
        seen = { key: await context.dedupKey(), text: new TextDecoder().decode(context.rawBody), request: context.request };
      },
    });
    expect((await handler(request)).status).toBe(200);
    expect(seen).toEqual({ key: expect.stringMatching(/^[0-9a-f]{64}$/), text: PROJECT_BODY, request });
  });

  test('a slow callback is reported (the service stops waiting at 8 s), and still answered', async () => {
    const route = setup(create, { onLogisticsUpdated: () => new Promise((r) => setTimeout(r, 60)), slowCallbackMs: 20 });
    expect((await route.handler(await post())).status).toBe(200);
    expect(route.reported.map(([, info]) => [info.stage, info.level])).toEqual([['slow', 'warn']]);
    expect((route.reported[0][0] as Error).message).toMatch(/Acknowledge first and process in the background/);
  });

  test('an onError that throws changes no answer, even from the slow-callback timer', async () => {
    const boom = () => {
      throw new Error('reporter bug');
    };
    const slow = create({ secret, onError: boom, slowCallbackMs: 10, onLogisticsUpdated: () => new Promise((r) => setTimeout(r, 40)) });
    expect((await slow(await post())).status).toBe(200);
    const refusing = create({ secret, onError: boom, onLogisticsUpdated: () => {} });
    const forged = new Request('http://partner.example/hook', {
      method: 'POST',
      headers: { 'x-channel-webhook-signature': 'ab'.repeat(32) },
      body: PROJECT_BODY,
    });
    expect((await refusing(forged)).status).toBe(401);
  });

  test('default reporting: one line per rejection, never the body or the secret; nothing for info', async () => {
    const output = captureConsole();
    try {
      const handler = create({ secret, onLogisticsUpdated: () => {} });
      await handler(
        new Request('http://partner.example/hook', { method: 'POST', headers: { 'x-channel-webhook-signature': 'ab'.repeat(32) }, body: PROJECT_BODY }),
      );
      const unsigned = create({ secret: '', allowUnsigned: true, onLogisticsUpdated: () => {} });
      await unsigned(new Request('http://partner.example/hook', { method: 'POST', body: PROJECT_BODY }));
    } finally {
      output.restore();
    }
    expect(output.lines).toEqual([
      'warn [channel-sdk] webhook signature -> 401: the x-channel-webhook-signature header does not match the body: check the webhook secret, and verify the raw body as received (not re-serialised JSON)',
    ]);
    expect(output.lines.join()).not.toContain(secret);
    expect(output.lines.join()).not.toContain('SO20240601001');
  });
});
