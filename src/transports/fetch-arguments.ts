import type { NativeOptions } from '../core/platform.js';
import { describeValue, fail } from '../shared/check.js';
import { messageOf } from '../shared/message.js';

// What client.fetch reads itself; every other RequestInit key (credentials, cache, redirect, an
// undici dispatcher, and whatever a library such as ofetch leaves in it) passes on untouched, as
// fetch ignores the keys it does not know.
const read = ['method', 'headers', 'body', 'signal'];

/**
 * `client.fetch`'s arguments as fetch reads them: a path, a URL string or object, or a Request
 * (its method, headers, body and signal, each overridden by `init`'s). A body that can be read
 * only once (a stream, an async iterable, a Request's) is read whole, inside the call, so that
 * the replay after a 401 sends it again.
 */
export function readFetchArguments(input: unknown, init: unknown): NativeOptions {
  if (init !== undefined && init !== null && typeof init !== 'object')
    fail('fetch init must be an object of fetch options (RequestInit); got ' + describeValue(init));
  const o = (init || {}) as Record<string, unknown>;
  const request = isRequest(input) ? input : undefined;
  const target = request ? request.url : input && typeof input === 'object' && typeof (input as URL).href === 'string' ? (input as URL).href : input;
  if (typeof target !== 'string') fail('fetch input must be a path, a URL under baseUrl or a Request; got ' + describeValue(input));
  const method = o.method !== undefined ? o.method : request && request.method;
  let body: unknown = o.body === null ? undefined : o.body;
  if (body === undefined && request && request.body) {
    if (request.bodyUsed) fail("the Request's body was already read (bodyUsed): pass request.clone() before reading it, or a new Request");
    body = request.arrayBuffer();
  } else if (
    body &&
    (typeof (body as ReadableStream).getReader === 'function' || typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function')
  ) {
    body = new Response(body as ReadableStream).arrayBuffer();
  }
  if (body !== undefined && /^(get|head)$/i.test(String(method || 'GET'))) fail(String(method || 'GET').toUpperCase() + ' requests have no body; use POST');
  if (body && typeof (body as Promise<unknown>).then === 'function')
    body = (body as Promise<unknown>).then(undefined, (error: unknown) => fail('the request body could not be read (' + messageOf(error) + ')'));
  const signal = o.signal !== undefined ? o.signal : request && request.signal;
  let rest: Record<string, unknown> | undefined;
  for (const key in o) if (read.indexOf(key) < 0) (rest || (rest = {}))[key] = o[key];
  // Only what the transport needs: nothing at all for a plain fetch(url).
  const realSignal = signal && typeof (signal as AbortSignal).throwIfAborted === 'function' ? signal : undefined;
  return {
    url: target,
    method,
    headers: headerRecord(o.headers !== undefined ? o.headers : request && request.headers),
    body,
    signal: signal === null ? undefined : signal,
    passOn: request || rest || realSignal ? { input: request, init: rest, signal: realSignal } : undefined,
  };
}

function isRequest(input: unknown): input is Request {
  const r = input as Request | null;
  return !!r && typeof r === 'object' && typeof r.url === 'string' && typeof r.method === 'string' && typeof r.arrayBuffer === 'function';
}

/** Headers, [name, value] pairs or a record, as a record (a record as it is: the core checks each name and value). */
function headerRecord(headers: unknown): Record<string, unknown> | undefined {
  if (headers === undefined || headers === null) return undefined;
  const wrong = (what: string): never => fail('headers must be a Headers object, [name, value] pairs or an object of names to strings; ' + what);
  if (typeof headers !== 'object') wrong('got ' + describeValue(headers));
  if (!Array.isArray(headers) && typeof (headers as Headers).forEach !== 'function') return headers as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  try {
    // fetch's own reading: lower-case names, repeated ones joined with ", ".
    new Headers(headers as HeadersInit).forEach((value, name) => (out[name] = value));
  } catch (error) {
    wrong(messageOf(error));
  }
  return out;
}
