import type { ParseArgsConfig } from 'node:util';
import { CliError, DEFAULT_SANDBOX_URL } from './cli-client.js';
import { HEADER_NAME, isHttpUrl } from '../http-io.js';
import { shown } from './cli-redis.js';

export type Options = NonNullable<ParseArgsConfig['options']>;
/** The options every command takes. */
export const common: Options = { sandbox: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } };
/** Each command's own options (its name is the key). */
export const optionsOf: Record<string, Options> = {
  start: {
    port: { type: 'string', default: '8787' },
    host: { type: 'string', default: '127.0.0.1' },
    ttl: { type: 'string', default: '900' },
    'webhook-url': { type: 'string' },
    'webhook-secret': { type: 'string', default: '' },
    'access-key': { type: 'string' },
    'secret-key': { type: 'string' },
    control: { type: 'string', default: 'loopback' },
    'control-host': { type: 'string', multiple: true },
    'clock-offset': { type: 'string' },
    quiet: { type: 'boolean' },
  },
  expire: {},
  'fail-next': { status: { type: 'string' }, 'retry-after': { type: 'string' } },
  push: { order: { type: 'string' }, tamper: { type: 'boolean' }, fresh: { type: 'boolean' }, to: { type: 'string' } },
  listen: { 'forward-to': { type: 'string' } },
  events: { all: { type: 'boolean' } },
  stats: {},
  token: {},
  ttl: {},
  check: { header: { type: 'string', multiple: true }, secret: { type: 'string' } },
  inbox: {
    redis: { type: 'string' },
    cluster: { type: 'boolean' },
    prefix: { type: 'string' },
    'key-prefix': { type: 'string' },
    limit: { type: 'string' },
    all: { type: 'boolean' },
    since: { type: 'string' },
  },
  doctor: {
    service: { type: 'string' },
    'access-key': { type: 'string' },
    'secret-key': { type: 'string' },
    user: { type: 'string' },
    'token-route': { type: 'string' },
    header: { type: 'string', multiple: true },
    'webhook-url': { type: 'string' },
    'webhook-secret': { type: 'string' },
    redis: { type: 'string' },
    cluster: { type: 'boolean' },
    prefix: { type: 'string' },
    'key-prefix': { type: 'string' },
  },
};

/** How many positional arguments each command takes after its name. */
export const positionals: Record<string, number> = { 'fail-next': 1, token: 1, ttl: 1, check: 2, inbox: 2 };

/** What parseArgs read. */
export type Values = Record<string, string | boolean | string[] | undefined>;

/** The running sandbox's address: --sandbox, else $CHANNEL_SANDBOX_URL, else the default. */
export function sandboxUrl(given: string | undefined): string {
  const url = given || process.env.CHANNEL_SANDBOX_URL || DEFAULT_SANDBOX_URL;
  httpUrl(url, given ? '--sandbox' : process.env.CHANNEL_SANDBOX_URL ? 'CHANNEL_SANDBOX_URL' : 'the default sandbox URL');
  return url.replace(/\/+$/, '');
}

/** Exit 2 unless `value` is an http(s) URL without credentials in it (fetch refuses to send `user:password@`). */
export function httpUrl(value: string, name: string): void {
  // As printed: the user info and any password-like query value masked (the URL may be mistyped around them).
  const printed = shown(value.replace(/^([^:/?#]*:\/*)[^/?#]*@/, '$1***@'));
  if (!isHttpUrl(value)) throw new CliError(`${name} must be an http(s) URL like http://127.0.0.1:3000/webhooks/channel; got "${printed}"`, 2);
  const { username, password } = new URL(value);
  if (username || password)
    throw new CliError(
      `${name} has credentials in it (user:password@), which fetch refuses to send: pass them as a header instead, --header "authorization: Basic <base64 of user:password>"; got "${printed}"`,
      2,
    );
}

/** `text` as a whole number within min..max, else exit 2. */
export function wholeNumber(text: string, name: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw new CliError(`${name} must be a whole number from ${min} to ${max}; got "${text}"`, 2);
  return value;
}

/** `--header "name: value"` lines as headers; two of one name joined as HTTP joins them (cookies with "; "). */
export function headersFrom(lines: string[] | undefined, command: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines ?? []) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    if (colon < 1 || !HEADER_NAME.test(name))
      throw new CliError(`${command}: --header must be "name: value", e.g. --header "cookie: session=abc"; got "${glimpse(line)}"`, 2);
    const value = line.slice(colon + 1).trim();
    // fetch refuses such a value before anything is sent: said here, not as 'connection failed: start your app'.
    if (/[^\t\x20-\x7e\x80-\xff]/.test(value))
      throw new CliError(
        `${command}: --header "${name}: …" has a character an HTTP header cannot carry (a line break, or beyond Latin-1): percent-encode it (encodeURIComponent), as your app's cookie would be`,
        2,
      );
    headers[name] = headers[name] === undefined ? value : headers[name] + (name === 'cookie' ? '; ' : ', ') + value;
  }
  return headers;
}

/**
 * A mistyped argument as an error message quotes it: whole when short (`now`), else its first word
 * to a `=` or `:` (`session=…`), else its first six characters (`sk_liv…`). A secret typed in the
 * wrong place (`--header cookie: session=…` unquoted, a key after the wrong option) is not printed.
 */
export function glimpse(text: string): string {
  if (text.length < 8) return text;
  return (/^[^\s=:]{1,20}[=:]/.exec(text)?.[0] ?? /^[^\s=:]{1,20}(?=\s)/.exec(text)?.[0] ?? text.slice(0, 6)) + '…';
}
