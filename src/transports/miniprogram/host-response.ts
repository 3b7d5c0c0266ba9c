import { AbortError } from '../../errors/AbortError.js';
import { ConfigError } from '../../errors/ConfigError.js';
import { NetworkError } from '../../errors/NetworkError.js';
import { TimeoutError } from '../../errors/TimeoutError.js';
import type { CallKind } from '../../core/platform.js';
import type { TransportRequest, TransportResponse } from '../../core/types.js';
import type { HostResult } from './host-api.js';

// Mini-program code, as host-transport.ts: ES2015 built-ins only, no fetch, TextDecoder or URL.

/** A host result's HTTP status, if it has one. */
export function statusOf(result: HostResult | undefined): number | undefined {
  if (!result || typeof result !== 'object') return undefined;
  const status = result.statusCode !== undefined ? result.statusCode : result.status;
  return typeof status === 'number' && status > 0 ? status : undefined;
}

/**
 * A host's result as a transport response (any status); throws when it is not one. `native`
 * (client.hostRequest): the result itself is the value, its data as the host parsed it.
 */
export function toResponse(result: HostResult, bytes: boolean, native?: boolean): TransportResponse {
  const status = statusOf(result);
  if (!status) throw new Error('no HTTP status in ' + (result === null || typeof result !== 'object' ? String(result) : 'its answer'));
  const headers: Record<string, string> = {};
  const raw = result.header !== undefined ? result.header : result.headers;
  // DingTalk on Android gives [{ key: value }, ...]; every host may use any key case.
  const groups = Array.isArray(raw) ? raw : raw ? [raw] : [];
  for (const group of groups) {
    if (!group || typeof group !== 'object') continue;
    for (const key of Object.keys(group)) {
      const value = group[key];
      headers[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    }
  }
  const response: TransportResponse = {
    status,
    headers: { get: (name) => headers[name.toLowerCase()] },
    body: native ? '' : textOf(result.data),
  };
  if (native) response.value = result;
  // responseType 'arraybuffer' with raw: true resolves to the bytes themselves.
  if (bytes && result.data instanceof ArrayBuffer && status >= 200 && status < 300) response.value = result.data;
  return response;
}

/** The body as text: hosts asked for text may still hand over an object or bytes. */
function textOf(data: unknown): string {
  if (data === undefined || data === null) return '';
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return utf8(new Uint8Array(data));
  return JSON.stringify(data);
}

/** UTF-8 bytes to a string without TextDecoder (absent on the hosts). */
function utf8(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i++];
    let code = b;
    if (b >= 0xf0) code = ((b & 7) << 18) | ((bytes[i++] & 63) << 12) | ((bytes[i++] & 63) << 6) | (bytes[i++] & 63);
    else if (b >= 0xe0) code = ((b & 15) << 12) | ((bytes[i++] & 63) << 6) | (bytes[i++] & 63);
    else if (b >= 0xc0) code = ((b & 31) << 6) | (bytes[i++] & 63);
    if (code > 0xffff) {
      code -= 0x10000;
      out += String.fromCharCode(0xd800 + (code >> 10), 0xdc00 + (code & 1023));
    } else out += String.fromCharCode(code);
  }
  return out;
}

/** A host's `fail()` without a status, as the SDK's error for it. */
export function toError(error: HostResult, req: TransportRequest, kind: CallKind): Error {
  const errMsg = error.errMsg || error.errorMessage || '';
  const code = typeof error.error === 'number' ? error.error : undefined; // Alipay
  const errno = code !== undefined ? code : typeof error.errno === 'number' ? error.errno : error.errCode;
  const context = { method: req.method, url: req.url, errMsg, errno };
  // Alipay's 13 is a timeout for request() only (its downloadFile uses 13 for "no permission").
  if ((code === 13 && kind === 'request') || /timeout/i.test(errMsg))
    return new TimeoutError('the host timed out the request (' + (errMsg || 'error 13') + ')', context);
  if (code === 9 || /abort/i.test(errMsg))
    return new AbortError('the host aborted the ' + (kind === 'request' ? 'request' : kind) + ' (' + (errMsg || 'error 9') + ')', context);
  if (code === 4 || code === 11 || /domain list|not in domain|合法域名/i.test(errMsg)) {
    return new ConfigError(
      req.url.replace(/^(https?:\/\/[^/]+).*$/, '$1') +
        ' is not an allowed request domain (' +
        (errMsg || 'error ' + code) +
        '); add it to the request domain allow-list in the mini-program console (the port must match)',
      context,
    );
  }
  // Interrupted (the app went to the background) and everything else: a retryable network error.
  return new NetworkError('the host ' + (kind === 'request' ? 'request' : kind + 'File') + ' failed: ' + (errMsg || 'error ' + errno), context);
}
