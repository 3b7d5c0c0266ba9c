// @vitest-environment node
/**
 * The two mini-program page examples a reader meets first, the README's (examples/miniprogram-page.js)
 * and the native WeChat quick start's (examples/quick-starts/wechat/pages/orders/orders.js), agree
 * on what `onLoad` returns (issue #46 item 7): a Promise that settles once the page shows its
 * orders or its error, so that a test awaits `page.onLoad()` the same way on both. Each is opened
 * as WeChat opens a page (its CommonJS modules, `Page({...})`, `getApp()`), on createMockHost.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import * as miniprogram from '../../src/miniprogram.js';
import { createMockHost } from '../../src/testing.js';

const uninstall: Array<() => void> = [];
afterEach(() => uninstall.splice(0).forEach((undo) => undo()));

interface OpenedPage {
  data: { orders: Array<{ order_no: string }>; error: string };
  onLoad(): unknown;
  onUnload?(): void;
}

/** Loads `app.js` (if any) and the page as WeChat does; `channel-sdk/miniprogram` is the source. */
function open(pagePath: string, appPath?: string): OpenedPage {
  const host = createMockHost();
  uninstall.push(host.install());
  let app: unknown = { globalData: { session: 'demo-session', userId: 'user-1' } };
  let definition: Record<string, unknown> = {};
  const cache = new Map<string, unknown>();
  const load = (file: string): unknown => {
    if (cache.has(file)) return cache.get(file);
    const module = { exports: {} as unknown };
    cache.set(file, module.exports);
    const require = (id: string) =>
      id === 'channel-sdk/miniprogram' ? miniprogram : load(normalize(join(dirname(file), id.endsWith('.js') ? id : id + '.js')));
    new Function('require', 'module', 'exports', 'wx', 'App', 'getApp', 'Page', readFileSync(file, 'utf8'))(
      require,
      module,
      module.exports,
      host,
      (options: unknown) => void (app = options),
      () => app,
      (options: Record<string, unknown>) => void (definition = options),
    );
    cache.set(file, module.exports);
    return module.exports;
  };
  if (appPath) load(appPath);
  load(pagePath);
  const page = { ...definition, data: JSON.parse(JSON.stringify(definition.data)) } as unknown as OpenedPage & { setData(patch: object): void };
  page.setData = (patch) => Object.assign(page.data, patch);
  return page;
}

test.each([
  ['README.md', 'examples/miniprogram-page.js', undefined],
  ['docs/guide/quick-starts.md (native WeChat)', 'examples/quick-starts/wechat/pages/orders/orders.js', 'examples/quick-starts/wechat/app.js'],
])('%s: onLoad() returns a Promise that settles with the orders shown', async (_doc, pagePath, appPath) => {
  const page = open(pagePath, appPath);
  const loaded = page.onLoad();
  expect(loaded).toBeInstanceOf(Promise);
  await loaded;
  expect(page.data.error).toBe('');
  expect(page.data.orders.map((order) => order.order_no)).toEqual(['SO20240601001', 'SO20240602002']);
  page.onUnload?.();
});
