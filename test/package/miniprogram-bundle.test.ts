/**
 * miniprogram_dist/index.js as WeChat's npm build takes it: ES2017 syntax, ES2015 built-ins,
 * no eval / Function, no require, and a full 401 -> refresh -> retry flow inside a node:vm
 * realm that has none of the web APIs and none of the built-ins newer than ES2015.
 * Needs `npm run build` first (npm test does it).
 */
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { parse } from 'acorn';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startFakeService, type FakeService } from '../helpers/fake-service.js';
import { createHost } from '../helpers/hosts.js';
import * as source from '../../src/miniprogram.js';

const code = readFileSync('miniprogram_dist/index.js', 'utf8');
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));

test('package.json points WeChat at miniprogram_dist, which has index.js', () => {
  expect(pkg.miniprogram).toBe('miniprogram_dist');
  expect(pkg.files).toContain('miniprogram_dist');
});

test('parses as ES2017 (no newer syntax)', () => {
  expect(() => parse(code, { ecmaVersion: 2017, sourceType: 'script' })).not.toThrow();
});

test.each([
  ['Object.fromEntries', /\bObject\.fromEntries\b/],
  ['Object.entries / values (ES2017)', /\bObject\.(entries|values)\b/],
  ['Object.getOwnPropertyDescriptors (ES2017, from spread helpers)', /getOwnPropertyDescriptors/],
  ['Promise.allSettled / any', /\bPromise\.(allSettled|any)\b/],
  ['Promise.prototype.finally', /\.finally\(/],
  ['globalThis', /\bglobalThis\b/],
  ['structuredClone', /\bstructuredClone\b/],
  ['Array/String includes, flat, padStart, replaceAll', /\.(includes|flat|flatMap|padStart|padEnd|replaceAll)\(/],
  ['eval', /\beval\(/],
  ['the Function constructor / regenerator', /\bnew Function\b|\bFunction\(|regeneratorRuntime/],
  ['require (every dependency inlined)', /\brequire\(/],
  [
    'fetch / XMLHttpRequest / AbortController / TextDecoder / URL',
    /\b(fetch|XMLHttpRequest|AbortController|TextDecoder|TextEncoder|URLSearchParams)\b|\bnew URL\b/,
  ],
])('uses no %s', (_label, pattern) => {
  expect(code.match(pattern)?.[0]).toBeUndefined();
});

test('exports exactly what the channel-sdk/miniprogram entry exports, as plain values', () => {
  const module = { exports: {} as Record<string, unknown> };
  new Function('module', 'exports', code)(module, module.exports);
  const kinds = (exports: Record<string, unknown>) =>
    Object.keys(exports)
      .toSorted()
      .map((name) => name + ': ' + typeof exports[name]);
  expect(kinds(module.exports)).toEqual(kinds(source));
});

let service: FakeService;
beforeAll(async () => {
  service = await startFakeService();
});
afterAll(() => service.close());

test('runs a full 401 -> refresh -> retry flow in a realm without web APIs or post-ES2015 built-ins', async () => {
  const wx = createHost('wx');
  const context = vm.createContext({ setTimeout, clearTimeout, wx, SERVICE: service.url, issue: () => service.issue() });
  vm.runInContext(
    `
    for (const k of ['fromEntries', 'entries', 'values', 'getOwnPropertyDescriptors']) delete Object[k];
    delete Promise.allSettled; delete Promise.any; delete Promise.prototype.finally;
    for (const k of ['includes', 'flat', 'flatMap']) delete Array.prototype[k];
    for (const k of ['padStart', 'padEnd', 'replaceAll']) delete String.prototype[k];
    delete globalThis.structuredClone;
    delete globalThis.globalThis;
    `,
    context,
  );
  const missing = vm.runInContext(
    `['fetch','Request','Response','Headers','AbortController','TextEncoder','TextDecoder','URL','URLSearchParams','globalThis','structuredClone']
      .filter(function (name) { return typeof this[name] !== 'undefined'; }, this)`,
    context,
  );
  expect(missing).toEqual([]);

  const module = { exports: {} as Record<string, unknown> };
  const wrapper = vm.runInContext(`(function (module, exports, require) {${code}\n})`, context);
  wrapper(module, module.exports, () => {
    throw new Error('the bundle must not require anything');
  });
  context.sdk = module.exports;
  const result = await vm.runInContext(
    `(async () => {
      // No request option: the bundle finds the wx global itself.
      const client = sdk.createClient({ baseUrl: SERVICE, tokenProvider: () => issue() });
      return { first: await client.get('/hello', { searchParams: { a: 1 } }) };
    })()`,
    context,
  );
  expect(result.first).toMatchObject({ method: 'GET', path: '/hello?a=1' });
  const flow = await vm.runInContext(
    `(async () => {
      const seen = [];
      let forced = 0;
      const client = sdk.createClient({ baseUrl: SERVICE, tokenProvider: ({ forceRefresh }) => { if (forceRefresh) forced++; return issue(); } });
      client.on('*', (type) => seen.push(type));
      await client.get('/a');
      expireAll();
      const data = await client.post('/b', { json: { text: '快件已发出' } });
      let error;
      try { await client.get('https://elsewhere.example/x'); } catch (e) { error = { code: e.code, isChannelError: sdk.isChannelError(e) }; }
      return { data, forced, seen, error };
    })()`,
    Object.assign(context, { expireAll: () => service.expireAll() }),
  );
  expect(flow.forced).toBe(1);
  expect(JSON.parse(flow.data.body)).toEqual({ text: '快件已发出' });
  expect(flow.seen).toEqual(expect.arrayContaining(['unauthorized', 'retry', 'token']));
  expect(flow.seen.filter((t: string) => t === 'unauthorized')).toHaveLength(1);
  expect(flow.error).toEqual({ code: 'CONFIG_ERROR', isChannelError: true });
  expect(wx.calls.length).toBeGreaterThanOrEqual(4);
});

test("require('channel-sdk/miniprogram') works in WeChat's npm layout: miniprogram.js and miniprogram/index.js are the same bundle", () => {
  const load = (file: string, seen = new Map<string, unknown>()): unknown => {
    const module = { exports: {} as Record<string, unknown> };
    const dir = file.slice(0, file.lastIndexOf('/'));
    const req = (id: string) => {
      const target = new URL(id, 'file://' + dir + '/').pathname;
      if (!seen.has(target)) seen.set(target, load(target, seen));
      return seen.get(target);
    };
    new Function('module', 'exports', 'require', readFileSync(file, 'utf8'))(module, module.exports, req);
    return module.exports;
  };
  const root = process.cwd() + '/miniprogram_dist/';
  const index = load(root + 'index.js') as Record<string, unknown>;
  for (const alias of ['miniprogram.js', 'miniprogram/index.js']) {
    expect(Object.keys(load(root + alias) as object).toSorted()).toEqual(Object.keys(index).toSorted());
    expect(() => parse(readFileSync(root + alias, 'utf8'), { ecmaVersion: 2017, sourceType: 'script' })).not.toThrow();
  }
});
