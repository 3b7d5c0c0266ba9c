import { Stop } from '../cancel.js';
import type { Attempts } from './attempts.js';
import type { Call } from './call.js';
import { raceRequest } from './request-abort.js';
import type { TransportResponse } from '../types.js';

/** Methods that change nothing on the service: every other one is a write. */
const reads = ['GET', 'HEAD', 'OPTIONS'];

/**
 * dedupeGets: identical GETs in flight share one network call, any number of waiters. Returns
 * `dedupeGet`, which runs a call through `attempts` or joins the one under way for its key, and
 * `attempts` itself wrapped so that every write ends the sharing: a GET joins only a call that
 * started after every write of this client that had started before it (read-your-writes), so a
 * write's start and its end each close the calls under way to newcomers. `live` holds what
 * clearToken() fences.
 */
export function createGetDedupe(attempts: Attempts, live: Set<Stop>) {
  const shared = new Map<string, { users: number; stop: Stop; writes: number; promise: Promise<TransportResponse> }>();
  let writes = 0; // writes started and ended so far

  function dedupeGet(key: string, call: Call): Promise<TransportResponse> {
    const { stop } = call;
    let entry = shared.get(key);
    // A call whose every waiter left is being dropped, or one a write overtook: a newcomer starts a fresh one.
    if (!entry || entry.stop.aborted || entry.writes !== writes) {
      const own = new Stop();
      // The newcomer's call, under a Stop of its own (fired when the last waiter leaves, or by
      // the fence) that drops the connection.
      const sharedCall: Call = Object.assign({}, call, { stop: own, dropOnAbort: true });
      const fresh = (entry = { users: 0, stop: own, writes, promise: attempts(sharedCall) });
      const done = () => {
        live.delete(own);
        if (shared.get(key) === fresh) shared.delete(key);
      };
      live.add(own);
      fresh.promise.then(done, done);
      shared.set(key, fresh);
    }
    const joined = entry;
    joined.users++;
    // The last waiter gone (its signal, or the fence): the call is dropped; until then it goes on.
    const leave = () => void (--joined.users === 0 && joined.stop.cancel(stop.reason));
    const waited = raceRequest(joined.promise, stop, call.context);
    waited.then(leave, leave);
    return waited;
  }

  const counted = (call: Call): Promise<TransportResponse> => {
    if (reads.indexOf(call.method) >= 0) return attempts(call);
    writes++;
    const after = () => void writes++;
    const promise = attempts(call);
    promise.then(after, after);
    return promise;
  };

  return { dedupeGet, attempts: counted };
}

/** The key identical GETs share, or undefined for a GET that must go alone. */
export function dedupeKeyOf(call: Call, o: Record<string, unknown>): string | undefined {
  // A retry policy with its own delay function cannot be compared: such a GET goes alone.
  const retry = o.retry as { delay?: unknown } | undefined;
  if (retry && typeof retry.delay === 'function') return undefined;
  // oxlint-disable-next-line unicorn/no-array-sort -- a fresh array; toSorted is ES2023, which mini-programs lack
  const names = Object.keys(call.headers).sort();
  // Everything the transport is sent besides the token: `raw` changes what it reads (the bytes of
  // responseType 'arraybuffer'), so callers that differ in it never share a reading.
  return JSON.stringify([call.url, names.map((n) => [n, call.headers[n]]), call.timeout, retry, call.hostOptions, call.raw, call.offlineWait]);
}
