// The option checks every public constructor runs: unknown keys with a "did you mean", values
// described without quoting a credential.
import { ConfigError } from '../errors/ConfigError.js';
import { MAX_DELAY } from './signal.js';

/** Throws the ConfigError every option check ends in. */
export function fail(message: string): never {
  throw new ConfigError(message);
}

/** A short, token-free description of a value for an error message. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  if (type === 'string') return (value as string).length > 80 ? 'a long string' : JSON.stringify(value);
  // Numbers and booleans are shown as they are: they cannot be a credential.
  if (type === 'number' || type === 'boolean') return String(value);
  return type === 'object' ? 'an object' : type === 'undefined' ? 'undefined' : 'a ' + type;
}

/**
 * `value` when it is a number of milliseconds from `min` to `max` (by default 1 to the longest
 * delay a timer holds), else the ConfigError every millisecond option words alike.
 */
export function milliseconds(name: string, value: unknown, min = 1, max = MAX_DELAY, example?: number): number {
  if (typeof value === 'number' && value >= min && value <= max) return value;
  return fail(
    name +
      ' must be a number of milliseconds from ' +
      min +
      ' to ' +
      max +
      (example === undefined ? '' : ' (e.g. ' + example + ')') +
      '; got ' +
      describeValue(value),
  );
}

/**
 * `value` when it is a whole number from `min` to `max`, else the ConfigError every count and
 * whole-second option words alike (`unit`: "seconds", "users"...).
 */
export function wholeNumber(name: string, value: unknown, min: number, max: number, unit: string, example: number): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  return fail(name + ' must be a whole number of ' + unit + ' from ' + min + ' to ' + max + ' (e.g. ' + example + '); got ' + describeValue(value));
}

/** How long a processed push is remembered, in whole seconds: the same rule for every dedup store and the inbox. */
export const TTL_SECONDS = { min: 1, max: 365 * 86_400, example: 86_400 } as const;

/** `o[name]`: absent, or a non-empty string. */
export function optionalString(o: Record<string, unknown>, name: string): string | undefined {
  const value = o[name];
  if (value !== undefined && !(typeof value === 'string' && value)) fail(name + ' must be a non-empty string; got ' + describeValue(value));
  return value as string | undefined;
}

/**
 * Throws ConfigError for a key outside `known`, suggesting the one it was probably meant to
 * be: a habit from another library (`hints`, e.g. axios' `data` for `json`), the same word in
 * another case, a typo (edit distance up to 2) or the same stem.
 */
export function checkKeys(value: object, known: string[], what: string, hints?: Record<string, string>): void {
  for (const key of Object.keys(value)) {
    if (known.indexOf(key) >= 0) continue;
    const lower = key.toLowerCase();
    let near: string | undefined;
    for (const hint in hints || {}) if (hint === lower) near = (hints as Record<string, string>)[hint];
    let best = near ? 0 : 3;
    for (const k of known) {
      const other = k.toLowerCase();
      // A shared stem counts as a near miss too: `retries` for `retry`.
      const d = Math.min(distance(lower, other), lower.slice(0, 4) === other.slice(0, 4) ? 2 : 3);
      if (d < best && d < other.length / 2) {
        best = d;
        near = k;
      }
    }
    fail('unknown ' + what + ' "' + key + '"' + (near ? '; did you mean "' + near + '"?' : '; known: ' + known.join(', ')));
  }
}

/** Levenshtein distance (keys are short). */
function distance(a: string, b: string): number {
  let prev: number[] = [];
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}
