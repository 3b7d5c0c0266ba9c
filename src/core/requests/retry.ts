import { checkKeys, describeValue, fail } from '../../shared/check.js';
import { messageOf } from '../../shared/message.js';
import { MAX_DELAY } from '../../shared/signal.js';
import type { RetryOptions } from '../types.js';

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

const isInt = (value: unknown, min: number, max: number) => typeof value === 'number' && value >= min && value <= max && value % 1 === 0;

export function retryPolicy(value: number | RetryOptions | undefined, base: RetryPolicy = defaults): RetryPolicy {
  if (value === undefined) return base;
  const o = typeof value === 'number' ? { limit: value } : value;
  if (typeof o !== 'object' || o === null || Array.isArray(o)) fail(shape + '; got ' + describeValue(value));
  checkKeys(o, Object.keys(defaults), 'retry option');
  const policy: RetryPolicy = Object.assign({}, base, o);
  const { limit, methods, statusCodes, delay, maxRetryAfter } = policy;
  const problem = !isInt(limit, 0, 100)
    ? 'limit must be a whole number from 0 to 100; got ' + describeValue(limit)
    : !Array.isArray(methods) || methods.some((m) => typeof m !== 'string')
      ? "methods must be an array of method names, e.g. ['GET', 'PUT']"
      : !Array.isArray(statusCodes) || statusCodes.some((s) => !isInt(s, 100, 599))
        ? 'statusCodes must be an array of HTTP statuses (numbers from 100 to 599), e.g. [503]'
        : typeof delay !== 'function'
          ? 'delay must be a function (retry number) => milliseconds'
          : !isInt(maxRetryAfter, 0, MAX_DELAY)
            ? 'maxRetryAfter must be a number of milliseconds from 0 to ' + MAX_DELAY + '; got ' + describeValue(maxRetryAfter)
            : '';
  if (problem) fail('retry.' + problem);
  policy.methods = methods.map((m) => m.toUpperCase());
  return policy;
}

/** The policy's delay before retry number `n`, checked: a user's function may return anything. */
export function delayOf(policy: RetryPolicy, n: number): number {
  let ms: unknown;
  try {
    ms = policy.delay(n);
  } catch (error) {
    fail('retry.delay threw: ' + messageOf(error));
  }
  if (!(typeof ms === 'number' && ms >= 0)) fail('retry.delay must return a number of milliseconds >= 0; it returned ' + describeValue(ms));
  return Math.min(ms, MAX_DELAY);
}

/** Milliseconds asked for by a `Retry-After` header (seconds or HTTP date), or undefined. */
export function retryAfterMs(header: string | null | undefined, now: number): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (!isNaN(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return isNaN(date) ? undefined : Math.max(0, date - now);
}
