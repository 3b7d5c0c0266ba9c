import { ConfigError } from '../errors/ConfigError.js';
import { checkKeys } from './url.js';
import type { RetryOptions } from './types.js';

export interface RetryPolicy {
  limit: number;
  methods: string[];
  statusCodes: number[];
  delay: (retry: number) => number;
  maxRetryAfter: number;
}

const defaults: RetryPolicy = {
  limit: 2,
  methods: ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'],
  statusCodes: [408, 429, 500, 502, 503, 504],
  // Exponential backoff with jitter in [50%, 100%] so that many clients do not retry in step.
  delay: (n) => Math.min(300 * 2 ** (n - 1), 10000) * (0.5 + Math.random() / 2),
  maxRetryAfter: 60000,
};

const shape = 'retry must be a number (the limit) or { limit: 0-100, methods: string[], statusCodes: number[], delay: (n) => ms, maxRetryAfter: ms }';

export function retryPolicy(value: number | RetryOptions | undefined, base: RetryPolicy = defaults): RetryPolicy {
  if (value === undefined) return base;
  const o = typeof value === 'number' ? { limit: value } : value;
  if (typeof o !== 'object' || o === null) throw new ConfigError(shape);
  checkKeys(o, Object.keys(defaults), 'retry option');
  const policy: RetryPolicy = Object.assign({}, base, o);
  const { limit, methods, statusCodes, delay, maxRetryAfter } = policy;
  if (
    !(limit >= 0 && limit <= 100 && limit % 1 === 0) ||
    !Array.isArray(methods) ||
    !Array.isArray(statusCodes) ||
    typeof delay !== 'function' ||
    !(maxRetryAfter >= 0)
  ) {
    throw new ConfigError(shape + '; got ' + JSON.stringify(o));
  }
  policy.methods = methods.map((m) => String(m).toUpperCase());
  return policy;
}

/** Milliseconds asked for by a `Retry-After` header (seconds or HTTP date), or undefined. */
export function retryAfterMs(header: string | null | undefined, now: number): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (!isNaN(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return isNaN(date) ? undefined : Math.max(0, date - now);
}
