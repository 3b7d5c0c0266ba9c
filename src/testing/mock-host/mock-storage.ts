import { isWxShaped, taroPromise, type MockHostKind } from './host-answers.js';
import { fail } from '../../shared/check.js';

type Callbacks = { success?(r: object): void; fail?(r: object): void; complete?(r: object): void };

/** A value as the host keeps it: a JSON copy (what JSON cannot hold is lost, as on a device). */
const copy = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));

/**
 * The host's storage over `map`, in its shape: WeChat and the others `getStorageSync(key)` (`''`
 * when missing) and `setStorageSync(key, data)`; Alipay `getStorageSync({ key })` → `{ data }`
 * (`null` when missing) and `setStorageSync({ key, data })`. The async forms call back (Taro's
 * also return a Promise).
 */
export function createStorage(kind: MockHostKind, map: Map<string, unknown>) {
  const alipay = !isWxShaped(kind);
  const keyOf = (arg: unknown, api: string): string => {
    const key = alipay ? (arg as { key?: unknown } | null)?.key : arg;
    if (typeof key !== 'string' || key === '')
      fail(`${kind}.${api}: the key must be a non-empty string${alipay ? ', passed as { key }' : ''}; got ${JSON.stringify(arg)}`);
    return key;
  };
  const read = (key: string) => (map.has(key) ? copy(map.get(key)) : undefined);
  const getStorageSync = (arg: unknown) => {
    const value = read(keyOf(arg, 'getStorageSync'));
    return alipay ? { data: value === undefined ? null : value } : (value ?? '');
  };
  const setStorageSync = (arg: unknown, data?: unknown) => {
    const key = keyOf(arg, 'setStorageSync');
    map.set(key, copy(alipay ? (arg as { data?: unknown }).data : data));
  };
  const removeStorageSync = (arg: unknown) => void map.delete(keyOf(arg, 'removeStorageSync'));

  /** An async storage call: runs `body` at once, answers on a microtask, as `{ errMsg }` or Alipay's shape. */
  const async = (api: string, options: Callbacks, body: () => object | undefined) => {
    const settle = (ok: boolean, result: object) =>
      void Promise.resolve().then(() => {
        (ok ? options.success : options.fail)?.(result);
        options.complete?.(result);
      });
    const wrapped = kind === 'Taro' ? taroPromise(options as never, {}) : undefined;
    try {
      const found = body();
      if (found === undefined) settle(false, alipay ? { error: 11, errorMessage: 'data not found' } : { errMsg: api + ':fail data not found' });
      else settle(true, alipay ? found : { ...found, errMsg: api + ':ok' });
    } catch (error) {
      settle(false, alipay ? { error: 2, errorMessage: (error as Error).message } : { errMsg: api + ':fail ' + (error as Error).message });
    }
    return wrapped;
  };

  return {
    getStorageSync,
    setStorageSync,
    removeStorageSync,
    clearStorageSync: () => map.clear(),
    getStorage: (options: Callbacks & { key?: unknown }) =>
      async('getStorage', options, () => {
        const value = read(keyOf(alipay ? options : options.key, 'getStorage'));
        return value === undefined && !alipay ? undefined : { data: value ?? null };
      }),
    setStorage: (options: Callbacks & { key?: unknown; data?: unknown }) =>
      async('setStorage', options, () => (map.set(keyOf(alipay ? options : options.key, 'setStorage'), copy(options.data)), {})),
    removeStorage: (options: Callbacks & { key?: unknown }) =>
      async('removeStorage', options, () => (map.delete(keyOf(alipay ? options : options.key, 'removeStorage')), {})),
  };
}
