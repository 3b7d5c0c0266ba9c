// When a call's attempts may go (issue #45): not while the host reports no network, a retry not
// while the host would interrupt it (a hidden mini-program), and a retry of a transient failure
// only while the client's retry budget lasts. The attempt loop (attempts.ts) asks at each step.
import { isChannelError, type ChannelError } from '../../errors/ChannelError.js';
import { NetworkError } from '../../errors/NetworkError.js';
import { checkKeys, describeValue, fail, milliseconds } from '../../shared/check.js';
import type { AppState } from './app-state.js';
import type { Call } from '../requests/call.js';
import type { Events } from '../events.js';
import { abortError } from '../requests/request-abort.js';
import type { RetryBudget } from '../requests/retry-budget.js';
import type { HeldToken } from '../token-lifecycle/token-types.js';
import type { OfflineOptions } from './pacing-types.js';

/** The `offline` option checked, with its defaults (the methods default to `retryMethods`); `false` (the network not followed: client.ts) has them too. */
export function offlineOptions(value: unknown, retryMethods: string[]): { wait: number; methods: string[] } {
  const o = checkOffline(value === false ? undefined : value, ['wait', 'methods']);
  const { methods = retryMethods } = o as OfflineOptions;
  if (!(Array.isArray(methods) && methods.every((m) => typeof m === 'string')))
    fail("offline.methods must be an array of method names, e.g. ['GET', 'HEAD']; got " + describeValue(methods));
  return { wait: waitOf(o, 30000), methods: methods.map((m) => m.toUpperCase()) };
}

/** A call's own `offline: { wait }`: its wait in ms whatever its method, or undefined when not given. */
export function callOfflineWait(value: unknown): number | undefined {
  return value === undefined ? undefined : waitOf(checkOffline(value, ['wait']), undefined);
}

function checkOffline(value: unknown, keys: string[]): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail('offline must be an object, e.g. { wait: 30000 } (ms a call may wait for the network; 0: fail at once); got ' + describeValue(value));
  checkKeys(value as object, keys, 'offline option');
  return value as Record<string, unknown>;
}

const waitOf = (o: Record<string, unknown>, byDefault: number | undefined) =>
  o.wait === undefined ? (byDefault as number) : milliseconds('offline.wait', o.wait, 0, undefined, 30000);

/** What the attempt loop asks before and after each step of a call. */
export interface Pacing {
  /** Starts following the app's life and the network (a client's first use). */
  start(): void;
  /**
   * Before a token is asked for or an attempt sent: undefined when the call may go on at once,
   * else the wait (for the network; for the app's return before a retry, where the host would
   * cut it), which rejects with NetworkError (`offline`) past the limit or AbortError. Throws
   * (a NetworkError with `offline`) for a call that may not wait. `again`: not the first attempt.
   */
  gate(call: Call, again: boolean): Promise<void> | undefined;
  /** What {@link gate} would wait for now (the network, or the app's return), without waiting: undefined when the call may go. */
  holds(call: Call, again: boolean): 'online' | 'shown' | undefined;
  /**
   * The mark an attempt takes as it leaves, for {@link lost}: the hides so far; -1 from a hidden
   * app (cut, its failure may arrive before or after onAppShow's listeners run).
   */
  mark(): number;
  /**
   * A transient failure without a response: `offline` (the host reported no network) or
   * `interrupted` (the app was hidden meanwhile, where that cuts requests) for a call to send
   * again once the network or the app is back (not a retry: no limit or budget spent), undefined
   * for an ordinary failure (and for one cut while hidden of a call that may not be sent again:
   * the retry rules decide); throws the failure, offline, for a call that may not be sent again.
   */
  lost(call: Call, failure: ChannelError, mark: number): 'offline' | 'interrupted' | undefined;
  /**
   * A token asked for on behalf of `call`: a provider that failed while the host reported no
   * network is asked again once it is back (the call waits as for a send), or the call fails
   * with NetworkError (`offline`).
   */
  token(call: Call, ask: () => HeldToken | Promise<HeldToken>): HeldToken | Promise<HeldToken>;
  /** Whether a transient failure is retried (the budget; `told`: Retry-After); emits `retry:refused` when not. */
  retry(call: Call, attempt: number, reason: 'network' | 'timeout' | 'status', status: number | undefined, told: boolean): boolean;
  /** An answer that was not a transient failure: the budget refills. */
  answered(): void;
}

/** What a client's pacing works over. */
export interface PacingOptions {
  /** The app's life and the network; none where the platform has neither signal. */
  app?: AppState;
  /** The retry budget; none with `retryBudget: false`. */
  budget?: RetryBudget;
  events: Events;
  now: () => number;
}

/** The pacing of a client: its app state (none without signals) and its retry budget (none with `retryBudget: false`). */
export function createPacing({ app, budget, events, now }: PacingOptions): Pacing {
  /** What holds `call` now: the network, or (for a call that waits, before a retry) the app's return. */
  function blocked(call: Call, again: boolean): 'online' | 'shown' | undefined {
    const state = app as AppState;
    return !state.online ? 'online' : again && state.interrupts && !state.visible && call.offlineWait > 0 ? 'shown' : undefined;
  }

  function offline(call: Call, waited: boolean, cause?: unknown): NetworkError {
    const { method, url } = call.context;
    return new NetworkError(
      'offline (the host reports no network): ' +
        method +
        ' ' +
        url +
        ' was not sent' +
        (waited ? ' within offline.wait (' + call.offlineWait + ' ms)' : '; pass offline: { wait: ms } to wait for the network'),
      { method, url, offline: true, cause },
    );
  }

  function wait(call: Call, again: boolean, until: 'online' | 'shown'): Promise<void> {
    const state = app as AppState;
    const { stop, context } = call;
    if (events.heard('wait')) events.emit('wait', { requestId: call.requestId, method: call.method, url: call.url, until });
    return new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const end = (settle: () => void) => {
        if (timer !== undefined) clearTimeout(timer);
        state.waiters.delete(check);
        stop.removeEventListener('abort', abort);
        settle();
      };
      const abort = () => end(() => reject(abortError(stop, context)));
      const expire = () => end(() => reject(offline(call, true)));
      function check(): void {
        const still = blocked(call, again);
        if (!still) return end(resolve);
        // The limit is on the network only: the app's return is waited for as long as the signal allows.
        if (still === 'online' && timer === undefined) {
          if (call.waitedSince === undefined) call.waitedSince = now();
          const left = call.waitedSince + call.offlineWait - now();
          if (left <= 0) return expire();
          timer = setTimeout(() => {
            timer = undefined;
            if (!state.online) expire();
          }, left);
        }
      }
      // Fenced or aborted already (between the step that settled and this one): no wait at all.
      if (stop.aborted) return abort();
      stop.addEventListener('abort', abort);
      state.waiters.add(check);
      check();
    });
  }

  function gate(call: Call, again: boolean): Promise<void> | undefined {
    if (!app) return undefined;
    // A host's first network answer not in yet: nothing goes (an app launched offline) until it is.
    if (app.first) return app.first;
    const until = blocked(call, again);
    if (!until) return undefined;
    if (!call.offlineWait) throw offline(call, false);
    return wait(call, again, until);
  }

  function token(call: Call, ask: () => HeldToken | Promise<HeldToken>): HeldToken | Promise<HeldToken> {
    const got = ask();
    if (!app || !('then' in got)) return got;
    return got.then(undefined, (error: unknown) => {
      // A provider's own request fails offline too: that is the network's doing, not the provider's.
      if (app.online || !(isChannelError(error) && error.code === 'TOKEN_PROVIDER_ERROR')) throw error;
      if (!call.offlineWait) throw offline(call, false, error);
      return Promise.resolve(gate(call, false)).then(() => token(call, ask));
    });
  }

  return {
    start: () => void (app && app.start()),
    gate,
    holds: (call, again) => (app ? blocked(call, again) : undefined),
    mark: () => (app ? (app.visible ? app.hides : -1) : 0),
    lost(call, failure, mark) {
      if (!app) return undefined;
      const off = !app.online;
      if (!off && !(app.interrupts && (app.hides !== mark || !app.visible))) return undefined;
      if (off && failure.code === 'NETWORK_ERROR') (failure as unknown as { offline: boolean }).offline = true;
      // Sent again only when that cannot do a thing twice: an idempotent call of the SDK's own (a
      // native call's stack retries by its own rules) that may wait. Cut while hidden with the
      // network up, any other call keeps the retry rules it had before (a write fails, a GET with
      // `offline: { wait: 0 }` spends its retry limit); offline, it fails now.
      if (call.offlineWait > 0 && call.kind !== 'native' && call.policy.methods.indexOf(call.method) >= 0) return off ? 'offline' : 'interrupted';
      if (off) throw failure;
      return undefined;
    },
    token,
    retry(call, attempt, reason, status, told) {
      if (!budget || budget.take(told)) return true;
      if (events.heard('retry:refused'))
        events.emit('retry:refused', { requestId: call.requestId, method: call.method, url: call.url, attempt, reason, status });
      return false;
    },
    answered: () => void (budget && budget.earn()),
  };
}
