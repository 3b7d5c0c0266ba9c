import ky, { isKyError, isNetworkError, isTimeoutError, type KyInstance, type Options as KyOptions } from 'ky';
import { NetworkError } from '../errors/NetworkError.js';
import { TimeoutError } from '../errors/TimeoutError.js';
import type { Transport } from '../core/types.js';
import { messageOf } from '../shared/message.js';
import { fail } from '../shared/check.js';
import { originOf } from '../core/requests/build-url.js';
import type { OpenBodies } from './open-bodies.js';

/** ky options the SDK owns; everything else (hooks, credentials, ...) passes through. */
export type KyPassThrough = Omit<
  KyOptions,
  'method' | 'json' | 'body' | 'headers' | 'searchParams' | 'retry' | 'timeout' | 'totalTimeout' | 'throwHttpErrors' | 'signal' | 'prefix' | 'baseUrl' | 'fetch'
>;

// Origins that refused a streamed upload (HTTP/1.1 in Chromium), for the life of the page.
const unstreamed: string[] = [];

const owned = [
  'method',
  'json',
  'body',
  'headers',
  'searchParams',
  'retry',
  'timeout',
  'totalTimeout',
  'throwHttpErrors',
  'signal',
  'prefix',
  'baseUrl',
  'prefixUrl',
  'fetch',
];

/**
 * A transport over ky. ky's own retry is off (the core retries, with the same policy on
 * every transport) and non-2xx statuses resolve, so the core sees every response.
 */
export function createFetchTransport(options: { fetch?: typeof fetch; ky?: KyPassThrough; bodies?: OpenBodies } = {}): Transport {
  const pass = options.ky || {};
  for (const key of owned) {
    if (key in pass) fail('ky.' + key + ' is set by channel-sdk; use the client or request option of that name instead');
  }
  const api: KyInstance = ky.create({ ...pass, retry: 0, throwHttpErrors: false, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const fetchOf = options.fetch || ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  return async ({ method, url, headers, body, timeout, signal, dropOnAbort = true, file, onProgress, raw }) => {
    needFetch(options.fetch);
    // ky (AbortSignal.any) and fetch only obey a real AbortSignal: a createCancelToken() signal
    // or the client's own would be accepted and never fire. One controller per attempt drops
    // the connection whichever kind of signal aborts; none when only a clearToken() fence can
    // fire (dropOnAbort: false), as ky's signal plumbing is a measurable part of a request (bench).
    const controller = signal && dropOnAbort ? new AbortController() : undefined;
    const abort = () => controller && controller.abort(signal && signal.reason);
    if (controller && signal) signal.addEventListener('abort', abort);
    // One deadline for the headers and the body (totalTimeout; ky retries nothing here). ky's
    // own body read enforces it and aborts the connection when it passes; a timer of ours
    // could only stop waiting, as the stream is locked by the read by then.
    const base: KyOptions = {
      method,
      headers,
      body: body as string | undefined,
      timeout,
      totalTimeout: timeout,
      ...(controller ? { signal: controller.signal } : {}),
    };
    const origin = originOf(url);
    // ky streams an upload's body to report its progress, which Chromium refuses on an HTTP/1.1
    // connection (ERR_H2_OR_QUIC_REQUIRED, before a byte is read); Firefox and Safari cannot
    // stream at all (ky then skips it). An attempt refused so, having sent nothing, is made once
    // more without streaming, and that origin is not streamed to again: its progress then
    // comes from the end of the upload.
    const streamed = !!(file && file.kind === 'upload' && onProgress && unstreamed.indexOf(origin) < 0);
    let moved = false;
    let ok = false;
    const send = (stream: boolean) => {
      const init: KyOptions = Object.assign({}, base);
      if (file && file.kind === 'upload') {
        // A fresh FormData per attempt (the replay after a 401 sends the file again); fetch sets
        // the multipart content-type with its boundary.
        const form = new FormData();
        for (const key of Object.keys(file.formData)) form.append(key, file.formData[key]);
        form.append(file.name, file.blob as Blob, file.fileName || (file.blob as File).name || 'blob');
        init.body = form;
        if (stream && onProgress) {
          init.onUploadProgress = (progress) => {
            moved = true;
            onProgress(progress);
          };
        }
      } else if (file && onProgress) {
        // A download's progress is the file's only: an error's body (a 401 before the replay)
        // arrives like one, so nothing is reported unless the status is a 2xx, which the fetch
        // itself tells, before ky starts streaming the body.
        init.fetch = (input, request) =>
          fetchOf(input as RequestInfo, request).then((response) => {
            ok = response.ok;
            return response;
          });
        init.onDownloadProgress = (progress) => ok && onProgress(progress);
      }
      return api(url, init);
    };
    try {
      let pending = send(streamed);
      if (file && file.kind === 'download') {
        if (raw) {
          const response = await pending;
          if (response.ok) {
            // Read by the caller after the call: the client's fence still reaches it.
            if (controller && options.bodies) options.bodies.hold(response, controller, { method, url });
            return { status: response.status, headers: response.headers, body: '', value: response };
          }
        }
        // The body is read under ky's deadline, from the start (how it arrives is how its
        // progress is reported); an error's body becomes the error's, never the file.
        const blob = await pending.blob();
        const response = await pending;
        return response.ok
          ? { status: response.status, headers: response.headers, body: '', value: blob }
          : { status: response.status, headers: response.headers, body: await blob.text() };
      }
      let text: string;
      try {
        text = await pending.text();
      } catch (error) {
        if (!(streamed && !moved && isNetworkError(error) && !(controller && controller.signal.aborted))) throw error;
        unstreamed.push(origin);
        pending = send(false);
        text = await pending.text();
      }
      const response = await pending;
      return { status: response.status, headers: response.headers, body: text };
    } catch (error) {
      if (controller && controller.signal.aborted) throw error; // the core turns this into AbortError
      if (isTimeoutError(error)) throw new TimeoutError('no complete response within ' + timeout + ' ms (timeout)', { method, url });
      // ky's errors hold the Request, and with it the Authorization header: keep only the cause.
      throw await networkError(method, url, isKyError(error) ? error.cause : error, fetchOf);
    } finally {
      if (controller && signal) signal.removeEventListener('abort', abort);
    }
  };
}

/**
 * A ConfigError where there is no fetch to call: a mini-program (a uni-app or Taro page) that
 * imported this entry. Read at each call, as a test's fetch may be stubbed after the client is made.
 */
export function needFetch(own: typeof fetch | undefined): void {
  if (!own && typeof fetch !== 'function')
    fail("this runtime has no fetch (a mini-program?): import createClient from 'channel-sdk/miniprogram', or pass the fetch option");
}

/**
 * The NetworkError of a fetch that failed before a response arrived (`cause` holds no token),
 * with what a probe of the service's origin tells about a page's cross-origin failure.
 */
export async function networkError(method: string, url: string, cause: unknown, fetchOf: typeof fetch): Promise<NetworkError> {
  const origin = originOf(url);
  return new NetworkError('network error: ' + networkMessage(cause) + (await corsHint(method, url, origin, cause, fetchOf)), { method, url, cause });
}

/** A network failure's message: undici's TypeError says only "fetch failed"; its cause says why. */
function networkMessage(error: unknown): string {
  return error instanceof Error ? messageOf(error) + (error.cause instanceof Error ? ' (' + messageOf(error.cause) + ')' : '') : 'unknown cause';
}

/**
 * A browser reports a CORS refusal as a bare TypeError ("Failed to fetch"), as it does a lost
 * connection. When the request crossed origins, a no-cors probe of the service's origin (no
 * token, no cookies; its answer unreadable by design) tells them apart: anything answered means
 * the browser hid the response (CORS); a probe that fails too means nothing answered at all
 * (a wrong host or port, the service down, offline). The probe waits 3 s at most.
 */
async function corsHint(method: string, url: string, origin: string, cause: unknown, fetchOf: typeof fetch): Promise<string> {
  const page = typeof location !== 'undefined' && typeof document !== 'undefined' ? location.origin : '';
  if (!page || page === 'null' || !(cause instanceof TypeError) || url.indexOf(page + '/') === 0) return '';
  let stop = () => {};
  const answered = await Promise.race([
    fetchOf(origin + '/', { mode: 'no-cors', credentials: 'omit', cache: 'no-store' }).then(
      () => true,
      () => false,
    ),
    new Promise<undefined>((resolve) => {
      const timer = setTimeout(resolve, 3000);
      stop = () => clearTimeout(timer);
    }),
  ]);
  stop();
  const what = '. No response reached the page (origin ' + page + ') for ' + method + ' ' + url + '. ';
  if (answered === false) {
    return (
      what +
      'Nothing answered at ' +
      origin +
      ' at all (connection refused, unknown host, offline, or blocked): check the host and port of baseUrl, and that the service is up'
    );
  }
  return (
    what +
    (answered ? 'The service answered, but the browser hid the response: CORS' : 'If the network is up this is usually CORS') +
    ', and the browser console names the exact cause: the service (or its gateway) must send Access-Control-Allow-Origin: ' +
    page +
    ' on every response, 401 and 5xx included; answer the preflight with Access-Control-Allow-Headers: authorization, content-type (and any header you add, traceparent with telemetry); and send Access-Control-Expose-Headers: Retry-After, Date'
  );
}
