import { ConfigError } from '../errors/ConfigError.js';
import { retryPolicy, type RetryPolicy } from './retry.js';
import type { CoreClientOptions, TokenProvider } from './types.js';
import { checkKeys, describe, normalizeBaseUrl } from './url.js';

export interface ResolvedOptions {
  base: string;
  tokenProvider: TokenProvider;
  timeout: number;
  tokenTimeout: number;
  refreshLeeway: number;
  headers: Record<string, string>;
  retry: RetryPolicy;
  now: () => number;
}

const coreKeys = ['baseUrl', 'tokenProvider', 'timeout', 'tokenTimeout', 'refreshLeeway', 'headers', 'retry', 'now'];

/** Checks every option of `createClient` and fills in the defaults (the only place they live). */
export function resolveOptions(options: CoreClientOptions, entryKeys: string[]): ResolvedOptions {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('createClient needs an options object: createClient({ baseUrl, tokenProvider })');
  }
  checkKeys(options, coreKeys.concat(entryKeys), 'option');
  if (typeof options.tokenProvider !== 'function') {
    throw new ConfigError('tokenProvider must be a function ({ forceRefresh }) => Promise<access_token string>; got ' + describe(options.tokenProvider));
  }
  const { timeout = 10000, tokenTimeout = 10000, refreshLeeway = 60, now = Date.now } = options;
  return {
    base: normalizeBaseUrl(options.baseUrl),
    tokenProvider: options.tokenProvider,
    timeout: milliseconds('timeout', timeout),
    tokenTimeout: milliseconds('tokenTimeout', tokenTimeout),
    refreshLeeway: refreshLeeway >= 0 && refreshLeeway < Infinity ? refreshLeeway : fail('refreshLeeway must be a number of seconds >= 0 (0 = refresh only on 401); got ' + describe(refreshLeeway)),
    // The service answers JSON; without this ky would ask for text/* (its .text() default).
    headers: Object.assign({ accept: 'application/json' }, normalizeHeaders(options.headers, 'headers')),
    retry: retryPolicy(options.retry),
    now: typeof now === 'function' ? now : fail('now must be a function returning epoch milliseconds'),
  };
}

/** A positive number of ms no larger than a timer can hold. */
export function milliseconds(name: string, value: unknown): number {
  if (typeof value === 'number' && value > 0 && value <= 2147483647) return value;
  return fail(name + ' must be a number of milliseconds from 1 to 2147483647; got ' + describe(value));
}

/** Copies headers with lower-case names; refuses non-string values and Authorization. */
export function normalizeHeaders(headers: unknown, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined) return out;
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    return fail(name + ' must be a plain object of header names to string values');
  }
  for (const key of Object.keys(headers)) {
    const value = (headers as Record<string, unknown>)[key];
    const lower = key.toLowerCase();
    if (lower === 'authorization') {
      return fail(name + '.' + key + ' is set by channel-sdk from tokenProvider; remove it');
    }
    if (typeof value !== 'string') return fail(name + '.' + key + ' must be a string; got ' + describe(value));
    out[lower] = value;
  }
  return out;
}

function fail(message: string): never {
  throw new ConfigError(message);
}
