/**
 * Every string reachable from `value`: own enumerable and non-enumerable properties, error
 * messages, stacks and causes, array items, Map/Set entries. Used to prove no token leaks.
 */
export function collectStrings(value: unknown, out: string[] = [], seen = new Set<unknown>()): string[] {
  if (typeof value === 'string') {
    out.push(value);
    return out;
  }
  if (typeof value !== 'object' || value === null || seen.has(value)) return out;
  seen.add(value);
  if (value instanceof Map || value instanceof Set) {
    for (const entry of value) collectStrings(entry, out, seen);
    return out;
  }
  for (const key of Object.getOwnPropertyNames(value)) {
    collectStrings((value as Record<string, unknown>)[key], out, seen);
  }
  if (value instanceof Error) {
    collectStrings(value.message, out, seen);
    collectStrings(value.stack, out, seen);
    collectStrings(value.cause, out, seen);
  }
  return out;
}
