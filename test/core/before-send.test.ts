// @vitest-environment node
// beforeSend (issue #32): a per-attempt hook on both entries. It runs again on every replay and
// retry, sees the attempt as sent (URL, headers, body), and can neither read nor set Authorization.
import { describe, expect, test } from 'vitest';
import { AbortError, ConfigError, createClient, TimeoutError, type ClientOptions, type SendAttempt } from '../../src/index.js';
import { createClient as createMiniProgramClient } from '../../src/miniprogram.js';
import { fakeServices, providerFor } from '../conformance/suite.js';
import type { FakeService } from '../helpers/fake-service.js';
import { createHost } from '../helpers/hosts.js';
import { collectStrings } from '../helpers/scan.js';

const start = fakeServices();

function clientOf(service: FakeService, beforeSend: ClientOptions['beforeSend'], extra: Partial<ClientOptions> = {}) {
  const provider = providerFor(service);
  return { client: createClient({ baseUrl: service.url, tokenProvider: provider, beforeSend, retry: { delay: () => 1 }, ...extra }), provider };
}

/** What the hook saw, a copy per attempt. */
function recorder(change?: (attempt: SendAttempt) => void) {
  const seen: Array<Omit<SendAttempt, 'headers'> & { headers: Record<string, string> }> = [];
  const hook = (attempt: SendAttempt) => {
    seen.push({ ...attempt, headers: { ...attempt.headers } });
    change?.(attempt);
  };
  return { seen, hook };
}

describe('beforeSend runs on every attempt', () => {
  test('request(): the first attempt, the replay after a 401 and a transient retry each run it, each from the call’s own headers and body', async () => {
    const service = await start();
    const { seen, hook } = recorder((attempt) => {
      attempt.headers['x-sign'] = 'sig-' + attempt.attempt;
      if (typeof attempt.body === 'string') attempt.body += ' ';
    });
    const { client } = clientOf(service, hook, { headers: { 'x-app': 'demo' } });
    await client.get('/warm');
    service.expireAll();
    service.hits.length = 0;
    seen.length = 0;
    // 401, then the replay meets the flaky 503, then the retry.
    await client.put('/flaky/1', { json: { a: 1 }, searchParams: { q: 'x y' } });
    expect(seen.map((s) => [s.attempt, s.method, s.url, s.body, s.headers['content-type'], s.headers['x-app']])).toEqual([
      [1, 'PUT', service.url + '/flaky/1?q=x%20y', '{"a":1}', 'application/json', 'demo'],
      [2, 'PUT', service.url + '/flaky/1?q=x%20y', '{"a":1}', 'application/json', 'demo'],
      [3, 'PUT', service.url + '/flaky/1?q=x%20y', '{"a":1}', 'application/json', 'demo'],
    ]);
    expect(new Set(seen.map((s) => s.requestId)).size).toBe(1);
    // What it changed went out on that attempt only: no header or body carried over.
    expect(service.hits.map((h) => [h.status, h.headers['x-sign'], h.body])).toEqual([
      [401, 'sig-1', '{"a":1} '],
      [503, 'sig-2', '{"a":1} '],
      [200, 'sig-3', '{"a":1} '],
    ]);
  });

  test('client.fetch: the hook sees the caller’s body (and the Request’s, read once) on both attempts', async () => {
    const service = await start();
    const { seen, hook } = recorder((attempt) => void (attempt.headers['x-trace'] = String(attempt.attempt)));
    const { client, provider } = clientOf(service, hook);
    await client.fetch('/warm');
    service.expireAll();
    service.hits.length = 0;
    seen.length = 0;
    const response = await client.fetch(new Request(service.url + '/r', { method: 'PUT', body: 'text', headers: { 'content-type': 'text/plain' } }));
    expect(response.status).toBe(200);
    expect(seen.map((s) => [s.attempt, s.method, s.url, new TextDecoder().decode(s.body as ArrayBuffer), s.headers['content-type']])).toEqual([
      [1, 'PUT', service.url + '/r', 'text', 'text/plain'],
      [2, 'PUT', service.url + '/r', 'text', 'text/plain'],
    ]);
    expect(service.hits.map((h) => [h.status, h.headers['x-trace'], h.body])).toEqual([
      [401, '1', 'text'],
      [200, '2', 'text'],
    ]);
    expect(provider.forced()).toBe(1);
  });

  test('the mini-program entry: request() runs it per attempt too, over the host', async () => {
    const service = await start();
    const host = createHost('wx');
    const { seen, hook } = recorder((attempt) => void (attempt.headers['x-sign'] = 'sig-' + attempt.attempt));
    const client = createMiniProgramClient({ baseUrl: service.url, tokenProvider: providerFor(service), request: host.request, beforeSend: hook });
    await client.get('/warm');
    service.expireAll();
    service.hits.length = 0;
    seen.length = 0;
    await client.post('/p', { json: { b: 2 } });
    expect(seen.map((s) => [s.attempt, s.body])).toEqual([
      [1, '{"b":2}'],
      [2, '{"b":2}'],
    ]);
    expect(host.calls.slice(-2).map((c) => c.header['x-sign'])).toEqual(['sig-1', 'sig-2']);
  });
});

describe('beforeSend cannot read or set Authorization', () => {
  test('the headers it sees never hold Authorization, on the first attempt or the replay', async () => {
    const service = await start();
    const { seen, hook } = recorder();
    const { client } = clientOf(service, hook);
    await client.get('/warm');
    service.expireAll();
    await client.get('/x');
    await client.fetch('/y', { headers: { 'x-own': '1' } });
    expect(seen.length).toBeGreaterThanOrEqual(4);
    expect(seen.flatMap((s) => Object.keys(s.headers)).filter((name) => name.toLowerCase() === 'authorization')).toEqual([]);
    expect(collectStrings(seen).filter((text) => service.issued.some((token) => text.includes(token)))).toEqual([]);
  });

  for (const name of ['authorization', 'Authorization', 'AUTHORIZATION', 'aUtHoRiZaTiOn']) {
    test(`setting ${name} is a ConfigError, nothing sent`, async () => {
      const service = await start();
      const { client } = clientOf(service, (attempt) => void (attempt.headers[name] = 'Bearer forged'));
      const errors = await Promise.all([client.get('/a').catch((e: unknown) => e), client.fetch('/b').catch((e: unknown) => e)]);
      expect(errors.map((e) => e instanceof ConfigError && /authorization/i.test((e as Error).message))).toEqual([true, true]);
      expect(service.hits).toHaveLength(0);
    });
  }
});

describe('what beforeSend does wrong', () => {
  test('a throw fails the call with a ConfigError (the cause kept, a token in its message redacted); nothing sent', async () => {
    const service = await start();
    let token = '';
    const { client } = clientOf(service, () => {
      throw new Error('signing failed for ' + token);
    });
    token = service.issue();
    const error = (await client.get('/a').catch((e: unknown) => e)) as ConfigError;
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(/beforeSend threw: signing failed for \[token\]$/);
    expect(collectStrings(error).filter((text) => text.includes(service.issued.at(-1)!))).toEqual([]);
    expect(service.hits).toHaveLength(0);
  });

  test('a throw on the replay only: the call fails with that ConfigError after the 401, no third attempt', async () => {
    const service = await start();
    const { client } = clientOf(service, (attempt) => {
      if (attempt.attempt === 2) throw new Error('key rotated');
    });
    await client.get('/warm');
    service.expireAll();
    service.hits.length = 0;
    const error = await client.get('/a').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(service.hits.map((h) => h.status)).toEqual([401]);
  });

  test('a returned value, a non-string header, a request() body that is not a string, a body on a GET, a hook that is not a function: ConfigErrors that say what to do', async () => {
    const service = await start();
    const cases: Array<[ClientOptions['beforeSend'], RegExp]> = [
      [(() => ({ headers: {} })) as unknown as ClientOptions['beforeSend'], /return nothing/],
      [(attempt) => void (attempt.headers['x-n'] = 1 as unknown as string), /x-n/],
      [(attempt) => void (attempt.body = { a: 1 }), /must stay a string/],
      [(attempt) => void (attempt.body = attempt.method === 'GET' ? 'x' : attempt.body), /GET requests have no body/],
    ];
    for (const [hook, message] of cases) {
      const { client } = clientOf(service, hook);
      const error = await (hook === cases[3][0] ? client.get('/a') : client.post('/a', { json: { a: 1 } })).catch((e: unknown) => e);
      expect({ error: error instanceof ConfigError && message.test((error as Error).message), message: String(error) }).toMatchObject({ error: true });
    }
    expect(service.hits).toHaveLength(0);
    expect(() => createClient({ baseUrl: service.url, tokenProvider: () => 't', beforeSend: 'sign' as unknown as ClientOptions['beforeSend'] })).toThrow(
      /beforeSend must be a function/,
    );
  });

  test('an async hook is awaited; an abort or clearToken() while it runs ends the call, nothing sent', async () => {
    const service = await start();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const { client } = clientOf(service, async (attempt) => {
      entered();
      await gate;
      attempt.headers['x-late'] = '1';
    });
    const controller = new AbortController();
    const aborted = client.get('/aborted', { signal: controller.signal }).catch((e: unknown) => e);
    await inside;
    controller.abort();
    expect(await aborted).toBeInstanceOf(AbortError);
    const fenced = client.fetch('/fenced').catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 0));
    client.clearToken();
    release();
    expect(await fenced).toBeInstanceOf(AbortError);
    expect(service.hits.map((h) => h.path)).not.toContain('/aborted');
    expect(service.hits.map((h) => h.path)).not.toContain('/fenced');
  });
});

describe('#42 item 8: a hung beforeSend is bounded by timeout', () => {
  test('an async hook that never settles fails the call with a TimeoutError after `timeout` (request(), client.fetch, a per-call timeout), nothing sent', async () => {
    const service = await start();
    const { client } = clientOf(service, (attempt) => (attempt.url.endsWith('/warm') ? undefined : new Promise<void>(() => {})), { timeout: 150 });
    await client.get('/warm');
    const errors = await Promise.all(
      [client.get('/a'), client.fetch('/b', { method: 'POST', body: 'x' }), client.post('/c', { json: {}, timeout: 50 })].map((p) =>
        p.catch((e: unknown) => e),
      ),
    );
    expect(errors.map((e) => [e instanceof TimeoutError, /beforeSend did not settle within (150|50) ms/.test((e as Error).message)])).toEqual([
      [true, true],
      [true, true],
      [true, true],
    ]);
    expect(service.hits.map((h) => h.path)).toEqual(['/warm']);
  });

  test('the mini-program entry: a hostRequest whose hook hangs fails with "request:fail timeout"', async () => {
    const service = await start();
    const host = createHost('wx');
    const client = createMiniProgramClient({
      baseUrl: service.url,
      tokenProvider: providerFor(service),
      request: host.request,
      timeout: 100,
      beforeSend: () => new Promise<void>(() => {}),
    });
    const error = (await client.hostRequest({ url: '/x' }).catch((e: unknown) => e)) as Error & { errMsg: string };
    expect([error.name, error.errMsg]).toEqual(['TimeoutError', 'request:fail timeout']);
    expect(host.calls).toHaveLength(0);
  });
});

describe('#42 item 3: every attempt starts from the call’s own body; the caller’s objects never change', () => {
  /** The caller's body as it was, to compare with after the call. */
  const snapshot = (value: unknown) => JSON.stringify(value, (_k, v: unknown) => (v instanceof Uint8Array ? Array.from(v) : v));

  test('client.fetch: a hook that signs URLSearchParams, stamps FormData and encrypts bytes in place sends each attempt once-changed; the caller’s bodies unchanged', async () => {
    const service = await start();
    const hook = async (attempt: SendAttempt) => {
      const body = attempt.body;
      // Async on purpose: the change lands after an await, as a signing call to a key service would.
      await Promise.resolve();
      if (body instanceof URLSearchParams) body.append('sig', 'sig-' + attempt.attempt + '-over-' + body.toString());
      else if (body instanceof FormData) body.append('stamp', String(attempt.attempt) + '/' + [...body.keys()].join(','));
      else if (body instanceof Uint8Array) body.forEach((b, i) => (body[i] = b ^ 0x20));
    };
    const { client, provider } = clientOf(service, hook);
    await client.fetch('/warm');
    const params = new URLSearchParams({ a: '1' });
    const form = new FormData();
    form.append('f', 'v');
    const bytes = new TextEncoder().encode('secret');
    const before = [params.toString(), [...form.entries()].map(String).join(), snapshot(bytes)];
    for (const [path, body] of [
      ['/params', params],
      ['/form', form],
      ['/bytes', bytes],
    ] as const) {
      service.expireAll();
      expect((await client.fetch(path, { method: 'POST', body })).status).toBe(200);
    }
    expect(provider.forced()).toBe(3);
    const sent = (path: string) => service.hits.filter((h) => h.path === path).map((h) => [h.status, h.body]);
    expect(sent('/params')).toEqual([
      [401, 'a=1&sig=sig-1-over-a%3D1'],
      [200, 'a=1&sig=sig-2-over-a%3D1'],
    ]);
    expect(sent('/form').map(([, body]) => /name="stamp"\r\n\r\n(.*)\r\n/.exec(String(body))?.[1])).toEqual(['1/f', '2/f']);
    expect(sent('/bytes')).toEqual([
      [401, 'SECRET'],
      [200, 'SECRET'],
    ]);
    expect([params.toString(), [...form.entries()].map(String).join(), snapshot(bytes)]).toEqual(before);
  });

  test('client.fetch with a DataView body (an ArrayBufferView fetch sends): a hook that encrypts it in place sends each attempt once-encrypted; the caller’s bytes unchanged', async () => {
    const service = await start();
    const hook = (attempt: SendAttempt) => {
      const body = attempt.body;
      if (body instanceof DataView) for (let i = 0; i < body.byteLength; i++) body.setUint8(i, body.getUint8(i) ^ 0x20);
    };
    const { client } = clientOf(service, hook);
    await client.fetch('/warm');
    // A view on part of a larger buffer: only its bytes are sent.
    const buffer = new TextEncoder().encode('--secret--').buffer;
    const view = new DataView(buffer, 2, 6);
    service.expireAll();
    expect((await client.fetch('/view', { method: 'POST', body: view })).status).toBe(200);
    // Before: the caller's view was encrypted by the first attempt, and the replay sent it encrypted twice ("secret").
    expect(service.hits.filter((h) => h.path === '/view').map((h) => [h.status, h.body])).toEqual([
      [401, 'SECRET'],
      [200, 'SECRET'],
    ]);
    expect(new TextDecoder().decode(buffer)).toBe('--secret--');
  });

  test('client.fetch with a Node Buffer body (whose slice shares its memory): a hook that encrypts it in place sends each attempt once-encrypted, from the caller’s bytes; the caller’s Buffer unchanged', async () => {
    const service = await start();
    const given: string[] = [];
    const hook = (attempt: SendAttempt) => {
      const body = attempt.body;
      if (!(body instanceof Uint8Array)) return;
      // Still a Buffer for the hook (its toString, its base64).
      given.push(Buffer.isBuffer(body) + ':' + Buffer.from(body).toString());
      body.forEach((b, i) => (body[i] = b ^ 0x20));
    };
    const { client } = clientOf(service, hook);
    await client.fetch('/warm');
    const bytes = Buffer.from('secret');
    service.expireAll();
    expect((await client.fetch('/buffer', { method: 'POST', body: bytes })).status).toBe(200);
    // Before: Buffer#slice(0) is a view of the same memory, so the hook encrypted the caller's Buffer,
    // and the replay after the 401 started from it: sent encrypted twice, that is in clear ("secret").
    expect(given).toEqual(['true:secret', 'true:secret']);
    expect(service.hits.filter((h) => h.path === '/buffer').map((h) => [h.status, h.body])).toEqual([
      [401, 'SECRET'],
      [200, 'SECRET'],
    ]);
    expect(bytes.toString()).toBe('secret');
  });

  test('hostRequest: a hook that encrypts a field of `data` in place (nested too) sends it encrypted once on each attempt; the caller’s data unchanged, whether the hook changes, replaces or throws', async () => {
    const service = await start();
    const host = createHost('wx');
    let mode: 'change' | 'replace' | 'throw' = 'change';
    const hook = (attempt: SendAttempt) => {
      const data = attempt.body as { card: string; meta: { tries: number[] } } | undefined;
      if (!data) return;
      data.card = 'enc(' + data.card + ')';
      data.meta.tries.push(attempt.attempt);
      if (mode === 'replace') attempt.body = { card: data.card, replaced: true };
      if (mode === 'throw' && attempt.attempt === 2) throw new Error('key service down');
    };
    const client = createMiniProgramClient({ baseUrl: service.url, tokenProvider: providerFor(service), request: host.request, beforeSend: hook });
    await client.get('/warm');
    for (const next of ['change', 'replace', 'throw'] as const) {
      mode = next;
      const data = { card: '4111', meta: { tries: [] as number[] } };
      service.expireAll();
      service.hits.length = 0;
      const result = await client.hostRequest({ url: '/pay', method: 'POST', data }).then(
        (r) => r.statusCode,
        (e: unknown) => (e as Error).name,
      );
      expect({ mode, result, data }).toEqual({ mode, result: mode === 'throw' ? 'ConfigError' : 200, data: { card: '4111', meta: { tries: [] } } });
      const bodies = service.hits.map((h) => JSON.parse(h.body) as unknown);
      const once = mode === 'replace' ? { card: 'enc(4111)', replaced: true } : { card: 'enc(4111)', meta: { tries: [1] } };
      expect({ mode, bodies }).toEqual({
        mode,
        bodies: mode === 'throw' ? [once] : [once, mode === 'replace' ? once : { card: 'enc(4111)', meta: { tries: [2] } }],
      });
    }
  });
});

describe('#42 round 5: headers given as a Headers object or a Map are read, not lost', () => {
  test('createClient headers, a request’s headers and a beforeSend that replaces attempt.headers with a Headers or a Map: every header sent, on the replay too', async () => {
    const service = await start();
    const hook = (attempt: SendAttempt) => {
      const sign = 'sig-' + attempt.attempt;
      if (attempt.url.endsWith('/headers')) attempt.headers = new Headers({ ...attempt.headers, 'x-sign': sign }) as never;
      if (attempt.url.endsWith('/map')) attempt.headers = new Map([...Object.entries(attempt.headers), ['x-sign', sign]]) as never;
    };
    const { client } = clientOf(service, hook, { headers: new Headers({ 'x-app': 'demo' }) as never });
    await client.get('/warm');
    service.expireAll();
    service.hits.length = 0;
    await client.get('/headers', { headers: new Headers({ 'X-Req': 'r' }) as never });
    await client.fetch('/map', { headers: { 'x-req': 'f' } });
    await client.get('/from-map', { headers: new Map([['x-req', 'm']]) as never });
    expect(service.hits.map((h) => [h.path, h.status, h.headers['x-app'], h.headers['x-req'], h.headers['x-sign']])).toEqual([
      ['/headers', 401, 'demo', 'r', 'sig-1'],
      ['/headers', 200, 'demo', 'r', 'sig-2'],
      ['/map', 200, 'demo', 'f', 'sig-1'],
      ['/from-map', 200, 'demo', 'm', undefined],
    ]);
  });

  test('an Authorization inside a Headers object or a Map is refused as in a plain object, nothing sent', async () => {
    const service = await start();
    const { client, provider } = clientOf(service, (attempt) => void (attempt.headers = new Headers({ Authorization: 'Bearer forged' }) as never));
    expect(() => createClient({ baseUrl: service.url, tokenProvider: provider, headers: new Headers({ authorization: 'Bearer forged' }) as never })).toThrow(
      /headers\.authorization is set by channel-sdk from tokenProvider; remove it/,
    );
    const plain = createClient({ baseUrl: service.url, tokenProvider: provider });
    await expect(plain.get('/x', { headers: new Map([['Authorization', 'Bearer forged']]) as never })).rejects.toThrow(
      /headers\.Authorization is set by channel-sdk/,
    );
    await expect(client.get('/x')).rejects.toThrow(/beforeSend: attempt\.headers\.authorization is set by channel-sdk/);
    expect(service.hits).toEqual([]);
  });
});

describe('#42 round 6: headers that cannot be read as given are refused with a ConfigError, none lost silently', () => {
  test('a headers container whose forEach throws (a Proxy, a broken polyfill) or a Map key that is no string: ConfigError naming the option, nothing sent', async () => {
    const service = await start();
    const provider = providerFor(service);
    const broken = new Proxy(new Map([['x-a', '1']]), {
      get: (target, key) =>
        key === 'forEach'
          ? () => {
              throw new Error('revoked');
            }
          : Reflect.get(target, key),
    });
    expect(() => createClient({ baseUrl: service.url, tokenProvider: provider, headers: broken as never })).toThrow(ConfigError);
    const client = createClient({ baseUrl: service.url, tokenProvider: provider });
    await expect(client.get('/x', { headers: broken as never })).rejects.toThrow(/\[channel-sdk\] headers could not be read \(revoked\)/);
    await expect(client.get('/x', { headers: new Map([[Object.create(null), 'v']]) as never })).rejects.toBeInstanceOf(ConfigError);
    const unreadable = new Proxy(
      {},
      {
        get: () => {
          throw new Error('revoked');
        },
      },
    );
    await expect(client.get('/x', { headers: unreadable as never })).rejects.toThrow(/headers could not be read \(revoked\)/);
    const { client: hooked } = clientOf(service, (attempt) => void (attempt.headers = broken as never));
    await expect(hooked.get('/x')).rejects.toThrow(/beforeSend: attempt\.headers could not be read/);
    expect(service.hits).toEqual([]);
  });

  test('a header named __proto__ (in a Map, or a parsed object) is refused, not dropped silently', async () => {
    const service = await start();
    const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service) });
    await expect(client.get('/x', { headers: new Map([['__proto__', 'v']]) as never })).rejects.toThrow(/headers\.__proto__/);
    await expect(client.get('/x', { headers: JSON.parse('{"__proto__":"v"}') })).rejects.toThrow(/headers\.__proto__/);
    expect(service.hits).toEqual([]);
  });
});
