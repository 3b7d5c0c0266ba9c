import type { NativeOptions } from '../core/platform.js';
import { describeValue, fail } from '../shared/check.js';
import { messageOf } from '../shared/message.js';

/**
 * `client.fetch`'s arguments as fetch reads them: a path, a URL string or object, or a Request
 * (its method, headers, body and signal, each overridden by `init`'s). A body that can be read
 * only once (a stream, an async iterable, a Request's) is read whole, inside the call, so that
 * the replay after a 401 sends it again.
 */
export function readFetchArguments(input: unknown, init: unknown): NativeOptions {
  // fetch(path), the common call: nothing else to read.
  if (init === undefined && typeof input === 'string') return { url: input };
  if (init !== undefined && init !== null && typeof init !== 'object')
    fail('fetch init must be an object of fetch options (RequestInit); got ' + describeValue(init));
  // What client.fetch reads itself; every other key (credentials, cache, redirect, an undici
  // dispatcher, whatever a library such as ofetch leaves in it) passes on untouched, as fetch
  // ignores the keys it does not know.
  const { method: m, headers: h, body: b, signal: s, ...rest } = (init || {}) as RequestInit;
  const given = input as Request & URL;
  // A Request from any realm; a URL object by its href.
  const request = given && typeof given === 'object' && typeof given.url === 'string' && typeof given.arrayBuffer === 'function' ? given : undefined;
  const url = request ? request.url : given && typeof given.href === 'string' ? given.href : input;
  if (typeof url !== 'string') fail('fetch input must be a path, a URL under baseUrl or a Request; got ' + describeValue(input));
  // init's own, else the Request's.
  const method = m !== undefined ? m : request && request.method;
  const signal = s !== undefined ? s : request && request.signal;
  let body: unknown = b === null ? undefined : b;
  if (body === undefined && request && request.body) {
    if (request.bodyUsed) fail("the Request's body was already read: pass request.clone() before reading it");
    body = request;
  }
  if (body !== undefined && /^(get|head)$/i.test(String(method || 'GET'))) fail(String(method || 'GET').toUpperCase() + ' requests have no body; use POST');
  const stream = body as (ReadableStream & AsyncIterable<unknown>) | Request;
  if (
    stream &&
    (stream === request ||
      typeof (stream as ReadableStream).getReader === 'function' ||
      typeof (stream as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function')
  )
    // In a promise: a stream locked or partly read throws as it is wrapped, and is refused as one that fails.
    body = Promise.resolve()
      .then(() => (stream === request ? request : new Response(stream as ReadableStream)).arrayBuffer())
      .then(undefined, (error: unknown) => fail('the request body could not be read (' + messageOf(error) + '); pass a stream nobody has read from or locked'));
  return {
    url,
    method,
    headers: headerRecord(h !== undefined ? h : request && request.headers),
    body,
    signal: signal === null ? undefined : signal,
    // The transport's fetch takes the Request itself, the other init keys, and a real AbortSignal: one
    // of this page (Chrome 93-99 and Firefox 92-96 have no throwIfAborted) or of another realm.
    passOn: {
      input: request,
      init: rest,
      signal: signal && (signal instanceof AbortSignal || typeof (signal as { throwIfAborted?: unknown }).throwIfAborted === 'function') ? signal : undefined,
    },
  };
}

/** Headers, [name, value] pairs or a record, as a record (a record as it is: the core checks each name and value). */
function headerRecord(headers: unknown): Record<string, unknown> | undefined {
  if (headers === undefined || headers === null) return undefined;
  const wrong = (what: string): never => fail('headers must be a Headers object, [name, value] pairs or an object of names to strings; ' + what);
  if (typeof headers !== 'object') wrong('got ' + describeValue(headers));
  if (!Array.isArray(headers) && typeof (headers as Headers).forEach !== 'function') return headers as Record<string, unknown>;
  try {
    // fetch's own reading: lower-case names, repeated ones joined with ", ".
    return Object.fromEntries(headers instanceof Headers ? headers : new Headers(headers as HeadersInit));
  } catch (error) {
    return wrong(messageOf(error));
  }
}
