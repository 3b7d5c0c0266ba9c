// The mini-program hosts' globals, looked up with typeof so that a missing one is not a ReferenceError.
declare const wx: unknown;
declare const my: unknown;
declare const tt: unknown;
declare const swan: unknown;
declare const qq: unknown;
declare const uni: unknown;
declare const Taro: unknown;

/**
 * The hosts the mini-program entry knows, in the order they are preferred: WeChat, Alipay, Douyin,
 * Baidu, QQ, and the uni-app and Taro APIs. The one list: the messages, hostTokenStore,
 * createMockHost and the tests read it (docs/maintainers/extending.md, "Add a host").
 */
export const HOST_NAMES = ['wx', 'my', 'tt', 'swan', 'qq', 'uni', 'Taro'] as const;

/** A host's global name. */
export type HostName = (typeof HOST_NAMES)[number];

/** The host globals present, in the order they are preferred: [name, object]. */
export function hostGlobals(): Array<[string, Record<string, unknown>]> {
  // In HOST_NAMES's order. Each read with typeof (a missing global is no ReferenceError): a host
  // has no globalThis to look names up on.
  const objects = [
    typeof wx !== 'undefined' ? wx : undefined,
    typeof my !== 'undefined' ? my : undefined,
    typeof tt !== 'undefined' ? tt : undefined,
    typeof swan !== 'undefined' ? swan : undefined,
    typeof qq !== 'undefined' ? qq : undefined,
    typeof uni !== 'undefined' ? uni : undefined,
    typeof Taro !== 'undefined' ? Taro : undefined,
  ];
  return HOST_NAMES.map((name, i): [string, unknown] => [name, objects[i]]).filter(
    (entry): entry is [string, Record<string, unknown>] => !!entry[1] && typeof entry[1] === 'object',
  );
}

/** The first host with a function `method`, or undefined. */
export function findHost(method: string): [string, Record<string, unknown>] | undefined {
  return hostGlobals().filter(([, host]) => typeof host[method] === 'function')[0];
}
