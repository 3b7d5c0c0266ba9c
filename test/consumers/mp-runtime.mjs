/**
 * A minimal WeChat mini-program logic layer for running a framework's built output
 * (dist/ of `taro build --type weapp`, dist/build/mp-weixin of `uni build -p mp-weixin`) in a
 * node:vm context: the globals WeChat gives every file (App, Page, Component, Behavior,
 * getApp, getCurrentPages, wx, global, __wxConfig), its module wrapper (a CommonJS require relative to
 * the file, with window/document & co. shadowed as WeChat does), and the lifecycle calls that
 * open the first page (App onLaunch/onShow, then the page's onLoad/onShow/onReady, or for a
 * page built as a Component — uni-app's way — created/attached, then the onLoad method).
 * `wx` is given by the caller: what is not emulated here is absent, so a framework that
 * needs more fails loudly instead of running on an accidental Node global.
 */
import { readFileSync, existsSync } from 'node:fs';
import { join, posix } from 'node:path';
import vm from 'node:vm';

// What WeChat's module wrapper passes as undefined so that browser globals cannot leak in.
const SHADOWED = [
  'window',
  'document',
  'frames',
  'self',
  'location',
  'navigator',
  'localStorage',
  'history',
  'Caches',
  'screen',
  'alert',
  'confirm',
  'prompt',
  'XMLHttpRequest',
  'WebSocket',
  'webkit',
  'WeixinJSCore',
];

/** Sets `value` at a setData path such as `root.cn.[0].v` or `list[2].name`. */
function setPath(target, path, value) {
  const keys = path
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter(Boolean);
  let node = target;
  keys.slice(0, -1).forEach((key, i) => {
    if (node[key] === null || typeof node[key] !== 'object') node[key] = /^\d+$/.test(keys[i + 1]) ? [] : {};
    node = node[key];
  });
  node[keys[keys.length - 1]] = value;
}

/**
 * Loads `app.js` of a built mini-program and opens its first page.
 * @param {string} root the directory holding app.js and app.json
 * @param {{ wx: object, console?: object }} options
 */
export function launch(root, { wx, console: logger = { log() {}, info() {}, warn() {}, error() {}, debug() {} } }) {
  const appJson = JSON.parse(readFileSync(join(root, 'app.json'), 'utf8'));
  const registered = { app: undefined, pages: new Map(), components: new Map() };
  const stack = [];
  const errors = [];
  let loading = '';

  const globals = {
    wx,
    // WeChat's own shared object (not globalThis); uni-app puts createApp & co. on it.
    global: {},
    console: logger,
    setTimeout,
    clearTimeout,
    setInterval,
    clearInterval,
    __wxConfig: {
      envVersion: 'develop',
      platform: 'devtools',
      pages: appJson.pages,
      global: { window: appJson.window ?? {} },
      accountInfo: { miniProgram: { appId: 'touristappid' } },
    },
    App: (options) => void (registered.app = options),
    Page: (options) => void registered.pages.set(loading, { kind: 'page', options }),
    Component: (options) => void registered.components.set(loading, { kind: 'component', options }),
    Behavior: (options) => options,
    getApp: () => registered.app,
    getCurrentPages: () => stack.slice(),
    requirePlugin: (name) => {
      throw new Error(`requirePlugin('${name}'): plugins are not emulated`);
    },
  };
  const context = vm.createContext(globals);
  const cache = new Map();

  const requireFrom = (from) => (id) => {
    let file = posix.normalize(id.startsWith('/') ? id.slice(1) : posix.join(posix.dirname(from), id));
    if (!file.endsWith('.js')) file += '.js';
    return load(file);
  };
  function load(file) {
    const hit = cache.get(file);
    if (hit) return hit.exports;
    const path = join(root, file);
    if (!existsSync(path)) throw new Error(`module "${file}" is not defined (no ${path})`);
    const module = { exports: {} };
    cache.set(file, module);
    const wrapper = vm.runInContext(`(function (require, module, exports, ${SHADOWED.join(', ')}) {${readFileSync(path, 'utf8')}\n})`, context, {
      filename: path,
    });
    const previous = loading;
    loading = file.replace(/\.js$/, '');
    try {
      wrapper(requireFrom(file), module, module.exports);
    } finally {
      loading = previous;
    }
    return module.exports;
  }

  /** A page instance as WeChat builds it: data, setData (applied now, callback later), route. */
  function instantiate(route, entry, query) {
    const { options } = entry;
    const instance = { route, __route__: route, options: query, data: structuredCloneLoose(options.data ?? {}), setDataCalls: 0 };
    instance.setData = (data, callback) => {
      instance.setDataCalls++;
      for (const [path, value] of Object.entries(data ?? {})) setPath(instance.data, path, value);
      if (callback) setTimeout(() => callback.call(instance), 0);
    };
    instance.selectComponent = () => null;
    instance.selectAllComponents = () => [];
    instance.createSelectorQuery = () => wx.createSelectorQuery?.();
    instance.triggerEvent = () => {};
    instance.getOpenerEventChannel = () => ({ on() {}, emit() {}, once() {}, off() {} });
    const methods = entry.kind === 'page' ? options : { ...options.methods };
    for (const [key, value] of Object.entries(methods)) {
      if (typeof value === 'function' && key !== 'data') instance[key] = value;
    }
    if (entry.kind === 'component') {
      instance.properties = instance.data;
      instance.is = route;
    }
    return instance;
  }

  const call = (fn, self, ...args) => {
    if (typeof fn !== 'function') return undefined;
    try {
      return fn.apply(self, args);
    } catch (error) {
      errors.push(error);
      return undefined;
    }
  };

  load('app.js');
  if (!registered.app) throw new Error('app.js did not call App()');
  const launchOptions = { path: appJson.pages[0], query: {}, scene: 1001, referrerInfo: {} };
  call(registered.app.onLaunch, registered.app, launchOptions);
  call(registered.app.onShow, registered.app, launchOptions);

  /** Opens a page as wx.navigateTo would: loads its file and runs its load lifecycle. */
  function openPage(route, query = {}) {
    load(`${route}.js`);
    const entry = registered.pages.get(route) ?? registered.components.get(route);
    if (!entry) throw new Error(`${route}.js registered neither Page() nor Component()`);
    const page = instantiate(route, entry, query);
    stack.push(page);
    if (entry.kind === 'page') {
      call(page.onLoad, page, query);
      call(page.onShow, page);
      call(page.onReady, page);
    } else {
      const { lifetimes = {}, pageLifetimes = {} } = entry.options;
      call(lifetimes.created ?? entry.options.created, page);
      call(lifetimes.attached ?? entry.options.attached, page);
      call(page.onLoad, page, query);
      call(pageLifetimes.show ?? page.onShow, page);
      call(lifetimes.ready ?? entry.options.ready, page);
      call(page.onReady, page);
    }
    return page;
  }

  return { app: registered.app, openPage, errors, pages: appJson.pages };
}

/** JSON-safe copy of a page's initial data (functions dropped as WeChat does). */
function structuredCloneLoose(value) {
  return JSON.parse(JSON.stringify(value));
}
