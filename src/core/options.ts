import { retryPolicy, type RetryPolicy } from './requests/retry.js';
import type { CoreClientOptions, TokenProvider, TokenStore } from './types.js';
import type { RetryBudgetOptions } from './app-life/pacing-types.js';
import type { BeforeSend } from './requests/send-attempt.js';
import { checkKeys, describeValue, fail, milliseconds } from '../shared/check.js';
import { normalizeBaseUrl } from '../shared/url.js';
import { messageOf } from '../shared/message.js';
import type { ClientTelemetryPlugin } from './telemetry-hooks.js';
import { offlineOptions } from './app-life/pacing.js';
import { retryBudgetOptions } from './requests/retry-budget.js';

export interface ResolvedOptions {
  base: string;
  tokenProvider: TokenProvider;
  timeout: number;
  tokenTimeout: number;
  refreshLeeway: number;
  headers: Record<string, string>;
  retry: RetryPolicy;
  now: () => number;
  tokenStore?: TokenStore;
  dedupeGets: boolean;
  beforeSend?: BeforeSend;
  telemetry?: ClientTelemetryPlugin;
  offline: { wait: number; methods: string[] };
  retryBudget: Required<RetryBudgetOptions> | false;
}

const coreKeys = [
  'baseUrl',
  'tokenProvider',
  'timeout',
  'tokenTimeout',
  'refreshLeeway',
  'headers',
  'retry',
  'now',
  'tokenStore',
  'dedupeGets',
  'beforeSend',
  'telemetry',
  'offline',
  'retryBudget',
];

/** Checks every option of `createClient` and fills in the defaults (the only place they live). */
export function resolveOptions(options: CoreClientOptions, entryKeys: string[]): ResolvedOptions {
  if (typeof options !== 'object' || options === null) {
    fail('createClient needs an options object: createClient({ baseUrl, tokenProvider })');
  }
  checkKeys(options, coreKeys.concat(entryKeys), 'option');
  if (typeof options.tokenProvider !== 'function') {
    fail('tokenProvider must be a function ({ forceRefresh }) => Promise<access_token string>; got ' + describeValue(options.tokenProvider));
  }
  const { timeout = 10000, tokenTimeout = 10000, refreshLeeway = 60, now = Date.now, tokenStore, dedupeGets = false, beforeSend, telemetry } = options;
  if (
    tokenStore !== undefined &&
    !(tokenStore && ['get', 'set', 'remove'].every((m) => typeof (tokenStore as unknown as Record<string, unknown>)[m] === 'function'))
  ) {
    fail(
      'tokenStore must be an object with get(), set(value) and remove() (sync or async), e.g. hostTokenStore({ key: () => userId }); got ' +
        describeValue(tokenStore),
    );
  }
  if (tokenStore && tokenStore.key !== undefined && typeof tokenStore.key !== 'function')
    fail('tokenStore.key must be a function returning the signed-in user id; got ' + describeValue(tokenStore.key));
  if (!(typeof refreshLeeway === 'number' && refreshLeeway >= 0 && refreshLeeway < Infinity)) {
    fail('refreshLeeway must be a number of seconds >= 0 (0 = refresh only on 401); got ' + describeValue(refreshLeeway));
  }
  const retry = retryPolicy(options.retry);
  return {
    base: normalizeBaseUrl(options.baseUrl),
    tokenProvider: options.tokenProvider,
    timeout: milliseconds('timeout', timeout),
    tokenTimeout: milliseconds('tokenTimeout', tokenTimeout),
    refreshLeeway,
    // The service answers JSON; without this ky would ask for text/* (its .text() default).
    headers: Object.assign({ accept: 'application/json' }, normalizeHeaders(options.headers, 'headers')),
    retry,
    now: typeof now === 'function' ? now : fail('now must be a function returning epoch milliseconds'),
    tokenStore,
    dedupeGets: typeof dedupeGets === 'boolean' ? dedupeGets : fail('dedupeGets must be true or false; got ' + describeValue(dedupeGets)),
    beforeSend:
      beforeSend === undefined || typeof beforeSend === 'function'
        ? beforeSend
        : fail('beforeSend must be a function (attempt) => void that changes attempt.headers or attempt.body; got ' + describeValue(beforeSend)),
    // The plug-in, not its options: a plain { tracer, meter } (the option's shape before the plug-in) names the import.
    telemetry:
      telemetry === undefined || (telemetry && typeof telemetry.attach === 'function')
        ? telemetry
        : fail("telemetry must be clientTelemetry({ tracer, meter }), imported from 'channel-sdk/telemetry'; got " + describeValue(telemetry)),
    offline: offlineOptions(options.offline, retry.methods),
    retryBudget: retryBudgetOptions(options.retryBudget),
  };
}

// RFC 9110 field names; values may not break the header line (a CR/LF would inject headers).
const headerName = /^[!#$%&'*+.^_`|~\w-]+$/;

/**
 * Copies headers with lower-case names; refuses non-string values, bad names, line breaks and
 * Authorization. A `Headers` object or a `Map` (no own keys: `Object.keys` would read none of
 * them and lose every header, an Authorization in it unrefused) is read by its entries.
 */
export function normalizeHeaders(headers: unknown, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined) return out;
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    return fail(name + ' must be a plain object of header names to string values (or a Headers object)');
  }
  let record = headers as Record<string, unknown>;
  const entries = headers as { forEach?: (f: (value: unknown, key: unknown) => void) => void };
  try {
    if (typeof entries.forEach === 'function') {
      // No prototype: a key __proto__ is kept (and refused below), not swallowed by the setter.
      record = Object.create(null) as Record<string, unknown>;
      entries.forEach((value, key) => (record[String(key)] = value));
    }
  } catch (error) {
    fail(name + ' could not be read (' + messageOf(error) + '); pass a plain object of header names to string values, a Headers or a Map');
  }
  for (const key of Object.keys(record)) {
    const value = record[key];
    const lower = key.toLowerCase();
    if (!headerName.test(key)) fail(name + ': ' + describeValue(key) + " is not a valid header name (letters, digits and !#$%&'*+-.^_`|~ only)");
    // An object's own __proto__ would be dropped silently on its way out (its setter ignores a string).
    if (lower === '__proto__') fail(name + '.' + key + ' cannot be sent (JavaScript reserves the name); rename the header');
    if (lower === 'authorization') fail(name + '.' + key + ' is set by channel-sdk from tokenProvider; remove it');
    if (typeof value !== 'string') fail(name + '.' + key + ' must be a string; got ' + describeValue(value));
    // The value is not quoted: it may be a credential.
    if (/[\r\n\0]/.test(value)) fail(name + '.' + key + ' contains a line break or NUL; a header value must be one line');
    out[lower] = value;
  }
  return out;
}
