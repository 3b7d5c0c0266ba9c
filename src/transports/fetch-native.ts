import { TimeoutError } from '../errors/TimeoutError.js';
import type { Transport, TransportResponse } from '../core/types.js';
import { needFetch, networkError } from './fetch.js';
import type { OpenBodies } from './open-bodies.js';

const noop = () => {};
// The reason an attempt's own controller is aborted with when its timeout passes.
const late = {};

/**
 * The attempts' timeouts of one client on one timer: a setTimeout and a clearTimeout per attempt
 * cost a measurable part of a local fetch (bench:fetch), an entry in a Set does not. The timer is armed for the earliest deadline; when it fires it aborts what is due
 * and arms for the next deadline (with one timeout for every attempt, about once per timeout).
 * Unref'd in Node: it never keeps a process alive (the fetch in flight does). performance.now(), not
 * Date.now(): a wall clock set back or forward would move every deadline with it. `after(controller,
 * ms)` aborts `controller` with `late` after `ms` unless the function it returns is called first.
 */
export function createDeadlines(): (controller: AbortController, ms: number) => () => void {
  const due = new Set<{ at: number; controller: AbortController }>();
  let armed = Infinity;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (at: number) => {
    if (at < armed) {
      clearTimeout(timer);
      armed = at;
      timer = setTimeout(fire, at - performance.now());
      // A browser's timer is a number, which has no unref.
      if ((timer as { unref?: () => void }).unref) (timer as { unref(): void }).unref();
    }
  };
  function fire() {
    const now = performance.now();
    let next = (armed = Infinity);
    due.forEach((entry) => (entry.at > now ? (next = Math.min(next, entry.at)) : (due.delete(entry), entry.controller.abort(late))));
    arm(next);
  }
  return (controller, ms) => {
    const entry = { at: performance.now() + ms, controller };
    due.add(entry);
    arm(entry.at);
    return () => due.delete(entry);
  };
}

/** Cancels the body of a response the core drops (the 401 before the replay); called as the response's method. */
function discard(this: TransportResponse): void {
  const { body } = this.value as Response;
  if (body) body.cancel().then(noop, noop);
}

/**
 * The transport of `client.fetch`'s attempts: the runtime's fetch (or the client's `fetch`
 * option) as it is, no ky. Resolves with the Response whatever its status, its body unread (a
 * response the core drops, such as the 401 before the replay, is cancelled). `timeout` bounds
 * an attempt up to the response headers; the caller's own AbortSignal (`passOn.signal`) also
 * stops the body it reads afterwards, as with fetch, and so does the client's fence (`bodies`).
 * Per attempt: one controller, one deadline, one listener on the call's signal; a signal combined
 * with the caller's only when there is one.
 */
export function createNativeFetch(own?: typeof fetch, bodies?: OpenBodies): Transport {
  const after = createDeadlines();
  return async ({ method, url, headers, body, timeout, signal, passOn }) => {
    needFetch(own);
    const controller = new AbortController();
    const abort = () => controller.abort(signal && signal.reason);
    if (signal) signal.addEventListener('abort', abort);
    const settled = after(controller, timeout);
    const given = passOn && (passOn.signal as AbortSignal | undefined);
    // The caller's own fetch options (credentials, a dispatcher, ofetch's...) under what the SDK read.
    const init: RequestInit = Object.assign({}, passOn && passOn.init);
    init.method = method;
    init.headers = headers;
    init.signal = given && AbortSignal.any ? AbortSignal.any([given, controller.signal]) : controller.signal;
    if (body !== undefined) init.body = body as BodyInit;
    try {
      const response = await (own || fetch)(((passOn && passOn.input) || url) as RequestInfo, init);
      // The caller reads the body after the call: the client's fence (and the caller's signal) must still reach it.
      if (bodies) bodies.hold(response, controller, { method, url }, given);
      return { status: response.status, headers: response.headers, body: '', value: response, discard };
    } catch (error) {
      if (controller.signal.reason === late) throw new TimeoutError('no response within ' + timeout + ' ms (timeout)', { method, url });
      // The core turns an abort into its AbortError.
      if (controller.signal.aborted || (given && given.aborted)) throw error;
      throw await networkError(method, url, error, own || fetch);
    } finally {
      settled();
      if (signal) signal.removeEventListener('abort', abort);
    }
  };
}
