// The mini-program hosts' globals, looked up with typeof so that a missing one is not a ReferenceError.
declare const wx: unknown;
declare const my: unknown;
declare const tt: unknown;
declare const swan: unknown;
declare const qq: unknown;
declare const uni: unknown;
declare const Taro: unknown;

/** The host globals present, in the order they are preferred: [name, object]. */
export function hostGlobals(): Array<[string, Record<string, unknown>]> {
  const all: Array<[string, unknown]> = [
    ['wx', typeof wx !== 'undefined' ? wx : undefined],
    ['my', typeof my !== 'undefined' ? my : undefined],
    ['tt', typeof tt !== 'undefined' ? tt : undefined],
    ['swan', typeof swan !== 'undefined' ? swan : undefined],
    ['qq', typeof qq !== 'undefined' ? qq : undefined],
    ['uni', typeof uni !== 'undefined' ? uni : undefined],
    ['Taro', typeof Taro !== 'undefined' ? Taro : undefined],
  ];
  return all.filter((entry): entry is [string, Record<string, unknown>] => !!entry[1] && typeof entry[1] === 'object');
}

/** The first host with a function `method`, or undefined. */
export function findHost(method: string): [string, Record<string, unknown>] | undefined {
  return hostGlobals().filter(([, host]) => typeof host[method] === 'function')[0];
}
