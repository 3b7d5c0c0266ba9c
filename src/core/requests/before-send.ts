import { ConfigError } from '../../errors/ConfigError.js';
import { TimeoutError } from '../../errors/TimeoutError.js';
import { describeValue, fail } from '../../shared/check.js';
import { messageOf } from '../../shared/message.js';
import type { Call } from './call.js';
import { normalizeHeaders } from '../options.js';
import type { Redactor } from '../redactor.js';
import { raceRequest } from './request-abort.js';
import type { BeforeSend, SendAttempt } from './send-attempt.js';

/** What one attempt sends besides the token. */
export interface Outgoing {
  headers: Record<string, string>;
  body?: unknown;
}

/** One run of the hook: for attempt number `attempt` of `call`, with the client's redactor. */
export interface BeforeSendRun {
  hook: BeforeSend;
  call: Call;
  attempt: number;
  redact: Redactor;
}

/**
 * Runs `beforeSend` for attempt number `attempt` of `call`, on a fresh copy of the call's headers
 * (never holding the token) and of its body, and checks what it left: header names and values as
 * the `headers` option is checked (Authorization refused in any case). A synchronous hook answers
 * at once; an asynchronous one is raced against the call's signal and its timeout (a
 * TimeoutError). Anything it throws becomes a ConfigError, its message redacted: the attempt is
 * not sent.
 */
export function runBeforeSend({ hook, call, attempt, redact }: BeforeSendRun): Outgoing | Promise<Outgoing> {
  const view: SendAttempt = {
    method: call.method,
    url: call.url,
    headers: Object.assign({}, call.headers),
    body: copyOf(call.body, 0),
    attempt,
    requestId: call.requestId,
  };
  const threw = (error: unknown): never => {
    throw new ConfigError('beforeSend threw: ' + redact.text(messageOf(error)), { cause: redact.cause(error) });
  };
  const read = (): Outgoing => {
    const { body } = view;
    if (body !== undefined) {
      // A request()'s body goes to the transport as a string; a native call's is its caller's own type.
      if (call.kind !== 'native' && typeof body !== 'string')
        fail('beforeSend: attempt.body must stay a string (the serialised JSON) for ' + call.kind + '(); got ' + describeValue(body));
      if (call.method === 'GET' || call.method === 'HEAD') fail('beforeSend: ' + call.method + ' requests have no body; leave attempt.body unset');
    }
    return { headers: normalizeHeaders(view.headers, 'beforeSend: attempt.headers'), body };
  };
  let returned: unknown;
  try {
    returned = hook(view);
  } catch (error) {
    threw(error);
  }
  if (returned === undefined) return read();
  if (!(returned && typeof (returned as { then?: unknown }).then === 'function'))
    fail(
      'beforeSend must be a function (attempt) => void that changes attempt.headers or attempt.body in place, and return nothing (or a promise of nothing); got ' +
        describeValue(returned),
    );
  // Bounded by the call's timeout: a hook that never settles must not hold the call forever.
  let timer = 0 as unknown as ReturnType<typeof setTimeout>;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new TimeoutError('beforeSend did not settle within ' + call.timeout + ' ms (timeout); make sure it always resolves or rejects', call.context)),
      call.timeout,
    );
  });
  const settled = (error?: unknown) => {
    clearTimeout(timer);
    if (error) throw error;
    return read();
  };
  return raceRequest(Promise.race([Promise.resolve(returned).then(undefined, threw), late]), call.stop, call.context).then(() => settled(), settled);
}

/**
 * A copy of a call's body for the hook to change in place: the next attempt starts from the call's
 * own, and the caller's object never changes. Plain objects and arrays (a host request's data)
 * deeply, bytes, and bodies of entries (FormData, URLSearchParams); strings, Blobs and the rest
 * are sent as they are.
 */
function copyOf(body: unknown, depth: number): unknown {
  const b = body as Record<string, unknown> & { slice?: (start: number) => unknown; append?: unknown; forEach(f: (v: unknown, k: unknown) => void): void };
  if (!b || typeof b !== 'object' || depth > 32) return body;
  // A typed array's own elements (its kind's from(): a Node Buffer's slice would share its memory),
  // an ArrayBuffer's slice, a DataView (neither) over a copy of its part of the buffer.
  if (b instanceof ArrayBuffer || ArrayBuffer.isView(b)) {
    const kind = b.constructor as unknown as { from?(v: unknown): unknown };
    if (kind.from) return kind.from(b);
    if (b.slice) return b.slice(0);
    const v = b as unknown as DataView;
    return new DataView(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
  }
  if (b.append && b.forEach) {
    const copy = new (b.constructor as new () => { append(k: unknown, v: unknown): void })();
    b.forEach((v, k) => copy.append(k, v));
    return copy;
  }
  const proto = Object.getPrototypeOf(b);
  if (!Array.isArray(b) && proto && proto !== Object.prototype) return b;
  const copy: Record<string, unknown> = Array.isArray(b) ? ([] as never) : {};
  for (const key of Object.keys(b)) copy[key] = copyOf(b[key], depth + 1);
  return copy;
}
