import { checkKeys, describeValue, fail, milliseconds, optionalString } from '../../shared/check.js';
import { messageOf } from '../../shared/message.js';
import type { NativeCalls, Platform } from '../platform.js';
import { normalizeHeaders, type ResolvedOptions } from '../options.js';
import { retryPolicy } from './retry.js';
import type { StandardSchemaV1 } from '../standard-schema.js';
import type { Call, CallInput } from './call.js';
import { monotonic } from './progress.js';
import type { FileSpec, Progress, RequestOptions, SignalLike } from '../types.js';
import { buildUrl } from './build-url.js';
import { callOfflineWait } from '../app-life/pacing.js';

const requestKeys = ['method', 'headers', 'searchParams', 'json', 'body', 'schema', 'raw', 'signal', 'timeout', 'retry', 'offline'];
// Habits from axios, fetch and got, so that a wrong key is a ConfigError that names the right one.
const requestHints = { data: 'json', params: 'searchParams', query: 'searchParams', qs: 'searchParams', canceltoken: 'signal', timeoutms: 'timeout' };
// Options every file call takes; upload and download add their own, and the entry its own (FileSource).
const fileKeys = ['headers', 'searchParams', 'signal', 'timeout', 'onProgress', 'offline'];
// Those habits, and the hosts' uploadFile's and axios/ky's for files (near misses such as
// `header` and `progress` need none: checkKeys finds those by spelling).
const fileHints = Object.assign({}, requestHints, {
  onprogressupdate: 'onProgress',
  onuploadprogress: 'onProgress',
  ondownloadprogress: 'onProgress',
  data: 'formData',
});
const methodName = /^[A-Za-z]+$/;

/**
 * The per-call option checks of a client: the returned `prepare` checks a call's options (the
 * client's, the call kind's and the entry's) and builds its {@link Call}, or throws a ConfigError.
 */
export function createCallPreparer(config: ResolvedOptions, platform: Platform) {
  const { files } = platform;
  const withHost = platform.hostOptions ? ['hostOptions'] : [];
  const keys = {
    request: requestKeys.concat(withHost),
    upload: fileKeys.concat(['name', 'formData', 'schema', 'raw'], files.upload, withHost),
    download: fileKeys.concat(files.download, withHost),
  };
  const hints = { request: requestHints, upload: Object.assign({}, fileHints, files.hints), download: Object.assign({}, fileHints, files.hints) };
  const once = Object.assign({}, config.retry, { limit: 0 });

  function prepare(input: CallInput): Call {
    const { kind, helper, stop } = input;
    // client.fetch, client.hostRequest: the entry reads the arguments into request()'s shape, with their URL.
    const n = kind === 'native' ? (platform.native as NativeCalls).read(input.path, input.options) : undefined;
    const o = (n || input.options) as Record<string, unknown>;
    if (!n) {
      if (typeof o !== 'object' || o === null)
        fail(
          kind +
            ' options must be an object, e.g. { ' +
            (kind === 'request' ? 'searchParams, json' : files.upload[0] + ', name') +
            ' }; got ' +
            describeValue(o),
        );
      checkKeys(o, keys[kind as 'request'], kind + ' option', hints[kind as 'request']);
    }
    const own = o.headers ? normalizeHeaders(o.headers, 'headers') : undefined;
    let headers = own ? Object.assign({}, config.headers, own) : config.headers;
    let method: string;
    let body: unknown;
    let file: FileSpec | undefined;
    if (kind === 'request' || n) {
      if (helper && o.method !== undefined) fail('method is set by ' + helper.toLowerCase() + '(); use request(path, { method }) for another');
      method = helper || methodOf(o.method);
      // A native call's body is its caller's own (fetch's BodyInit, a host's data).
      body = o.body;
      if (!n && body !== undefined && typeof body !== 'string') fail('body must be a string; pass objects as json: value');
      if (o.json !== undefined) {
        if (body !== undefined) fail('pass either json or body, not both');
        try {
          body = JSON.stringify(o.json);
        } catch (error) {
          fail('json could not be serialised (' + messageOf(error) + '); pass plain JSON data');
        }
        if (body === undefined) fail('json must be JSON data; got ' + describeValue(o.json));
        if (!headers['content-type']) headers = Object.assign({}, headers, { 'content-type': 'application/json' });
      }
      if (!n && body !== undefined && (method === 'GET' || method === 'HEAD'))
        fail(method + ' requests have no body; send values in searchParams, or use POST');
    } else {
      // The multipart boundary is the host's (or fetch's) to set. A download takes any type
      // unless the call names one: the client's accept is for the service's JSON.
      if (own && own['content-type']) fail('content-type is set by the ' + kind + ' itself; remove it from headers');
      headers = Object.assign({}, headers);
      delete headers['content-type'];
      if (kind === 'download') {
        if (!(own && own.accept)) headers.accept = '*/*';
        method = 'GET';
        file = { kind, filePath: optionalString(o, 'filePath') };
      } else {
        method = 'POST';
        file = uploadSpec(o);
      }
    }
    const url = buildUrl(config.base, n ? n.url : input.path, o.searchParams as RequestOptions['searchParams']);
    const { raw = false, schema } = o as { raw?: unknown; schema?: StandardSchemaV1<unknown, unknown> };
    if (typeof raw !== 'boolean') fail('raw must be true or false; got ' + describeValue(raw));
    if (schema !== undefined && !(schema && schema['~standard'] && typeof schema['~standard'].validate === 'function')) {
      fail('schema must be a Standard Schema (zod 4, valibot, arktype...); got ' + describeValue(schema));
    }
    const given = signalOf(o.signal);
    const ownWait = callOfflineWait(o.offline);
    const { onProgress } = o;
    if (onProgress !== undefined && typeof onProgress !== 'function')
      fail('onProgress must be a function ({ percent, transferredBytes, totalBytes }) => void; got ' + describeValue(onProgress));
    return {
      kind,
      method,
      url,
      context: { method, url },
      headers,
      body,
      raw,
      schema,
      given,
      timeout: o.timeout === undefined ? config.timeout : milliseconds('timeout', o.timeout),
      // A native call's stack retries by its own rules (isRetryable): the SDK adds only the replay after a 401.
      policy: n ? once : o.retry === undefined ? config.retry : retryPolicy(o.retry as RequestOptions['retry'], config.retry),
      file,
      offlineWait: ownWait !== undefined ? ownWait : config.offline.methods.indexOf(method) >= 0 ? config.offline.wait : 0,
      hostOptions: platform.hostOptions && platform.hostOptions(n ? 'request' : kind, o.hostOptions),
      passOn: o.passOn as Record<string, unknown> | undefined,
      transport: (n ? (platform.native as NativeCalls) : platform).transport,
      requestId: input.requestId,
      stop,
      // A plain request without a signal of its own can only be fenced by clearToken(): an
      // attempt already on the wire may then finish on its own (see attempts.ts). A native call's
      // transport drops it in any case.
      dropOnAbort: !!given || kind !== 'request',
      progress: onProgress ? monotonic(onProgress as (progress: Progress) => void, stop) : undefined,
    };
  }

  function uploadSpec(o: Record<string, unknown>): FileSpec {
    const name = o.name;
    if (!(typeof name === 'string' && name))
      fail('name must be the multipart field name the server reads the file from, e.g. name: "file"; got ' + describeValue(name));
    const formData: Record<string, string> = {};
    const fields = o.formData;
    if (fields !== undefined) {
      if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
        fail('formData must be an object of field names to strings; got ' + describeValue(fields));
      for (const key of Object.keys(fields)) {
        const value = (fields as Record<string, unknown>)[key];
        if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
          fail('formData.' + key + ' must be a string, number or boolean; got ' + describeValue(value));
        formData[key] = String(value);
      }
    }
    return Object.assign({ kind: 'upload' as const, name, formData }, files.take(o));
  }

  return prepare;
}

function methodOf(value: unknown): string {
  if (value === undefined) return 'GET';
  return typeof value === 'string' && methodName.test(value)
    ? value.toUpperCase()
    : fail('method must be an HTTP method name such as "PUT"; got ' + describeValue(value));
}

function signalOf(value: unknown): SignalLike | undefined {
  const given = value as SignalLike | undefined;
  if (given !== undefined && !(given && typeof given.addEventListener === 'function' && typeof given.aborted === 'boolean'))
    fail('signal must be an AbortSignal or createCancelToken().signal; got ' + describeValue(given));
  return given;
}
