// Running the user's callbacks: one timer watches every callback in progress, renews the dedup
// lease of each every third of dedupLeaseMs, reports a slow one at slowCallbackMs, and stops
// waiting for one at callbackTimeoutMs (its lease then lapses, so a redelivery can run it).
import type { UnknownWebhookEvent, WebhookEvent } from '../../schemas/logistics.js';
import { answer, type Outgoing } from '../http/route.js';
import type { DedupLease, WebhookDedupStore } from './dedup.js';
import type { WebhookContext, WebhookErrorInfo, WebhookHandlerOptions } from './handler-options.js';
import { isLogisticsUpdated } from './parse.js';
import { errorType } from '../../shared/otel-api.js';
import type { Stage, WebhookTelemetry } from '../telemetry/webhook-telemetry.js';

export const OK = answer(200, { ok: true });
export const FAILED = answer(500, { error: 'handler failed' });
/** The callback was cut off at callbackTimeoutMs: it may still be running. */
export const UNFINISHED = answer(500, { error: 'the handler did not finish in time' });
const CUT: unique symbol = Symbol('callback cut off');

/** A delivery's hold on its push, renewed while its callback runs. */
export interface Held {
  store: WebhookDedupStore;
  key: string;
  lease: DedupLease;
  renewed?: number;
  renewing?: boolean;
  lost?: boolean;
}

export interface CallbackRunnerOptions extends Pick<WebhookHandlerOptions, 'onLogisticsUpdated' | 'onEvent'> {
  slowCallbackMs: number;
  callbackTimeoutMs: number;
  dedupLeaseMs: number;
  report(error: unknown, info: WebhookErrorInfo): void;
  /** A dedup store call, bounded by dedupTimeoutMs. */
  storeCall<T>(call: () => T | Promise<T>, what: string): Promise<T>;
  telemetry?: WebhookTelemetry;
}

/** `deliver(event, context, held?)`: runs the callback; OK, FAILED (it threw) or UNFINISHED (cut off). */
export function createCallbackRunner(o: CallbackRunnerOptions): (event: WebhookEvent, context: WebhookContext, held?: Held) => Promise<Outgoing> {
  const { onLogisticsUpdated, onEvent, slowCallbackMs, callbackTimeoutMs, dedupLeaseMs, report, storeCall, telemetry } = o;
  // Callbacks in progress, watched by one timer rather than a timer per push.
  interface Running {
    started: number;
    reported: boolean;
    held?: Held;
    /** Stops waiting for the callback (at callbackTimeoutMs). */
    cut(): void;
  }
  const running = new Set<Running>();
  let watcher: ReturnType<typeof setInterval> | undefined;
  const renewEvery = dedupLeaseMs / 3;
  const renew = (held: Held, now: number) => {
    held.renewing = true;
    held.renewed = now;
    storeCall(() => held.store.renew(held.key, held.lease), 'renew').then(
      (mine) => {
        held.renewing = false;
        if (mine === false && !held.lost) {
          held.lost = true;
          report(
            new Error(
              'the lease on this push lapsed while its callback ran (the event loop or the store stalled past dedupLeaseMs); another delivery may run it too',
            ),
            { stage: 'dedup', level: 'warn' },
          );
        }
      },
      (error: unknown) => {
        held.renewing = false;
        report(error, { stage: 'dedup', level: 'warn' });
      },
    );
  };
  const watch = () => {
    const now = Date.now();
    for (const call of running) {
      // A callback that never settles would hold its push on every instance (its lease renewed
      // for ever): past callbackTimeoutMs it is no longer waited for, and its lease lapses.
      if (now - call.started >= callbackTimeoutMs) {
        call.cut();
        continue;
      }
      const held = call.held;
      if (held && !held.renewing && !held.lost && now - (held.renewed ?? call.started) >= renewEvery) renew(held, now);
      if (call.reported || now - call.started < slowCallbackMs) continue;
      call.reported = true;
      report(
        new Error(
          'the callback has run ' +
            slowCallbackMs +
            ' ms; the service stops waiting at 8 s and records a failure. Acknowledge first and process in the background (enqueue, then return)',
        ),
        { stage: 'slow', level: 'warn', elapsedMs: now - call.started },
      );
    }
  };
  const watchEvery = Math.min(500, Math.max(5, slowCallbackMs / 8), Math.max(5, renewEvery / 2), Math.max(5, callbackTimeoutMs / 8));

  // With a tracer, the callback runs in its span: the spans it makes are that span's children.
  if (telemetry) return (event, context, held) => telemetry.active('callback', (stage) => deliver(event, context, held, stage));
  return deliver;

  async function deliver(event: WebhookEvent, context: WebhookContext, held?: Held, stage?: Stage): Promise<Outgoing> {
    let cut!: () => void;
    const cutOff = new Promise<typeof CUT>((resolve) => (cut = () => resolve(CUT)));
    const call: Running = { started: Date.now(), reported: false, held, cut };
    running.add(call);
    if (!watcher) {
      watcher = setInterval(watch, watchEvery);
      (watcher as { unref?: () => void }).unref?.();
    }
    try {
      const callback = isLogisticsUpdated(event) ? onLogisticsUpdated(event, context) : onEvent ? onEvent(event as UnknownWebhookEvent, context) : undefined;
      if ((await Promise.race([callback, cutOff])) === CUT) {
        const error = new Error(
          'the callback did not settle within callbackTimeoutMs (' +
            callbackTimeoutMs +
            ' ms); answered 500 and stopped renewing its dedup lease, so a redelivery runs it again once the lease lapses. Acknowledge first and process in the background (enqueue, then return)',
        );
        stage?.fail('timeout');
        report(error, { stage: 'callback', level: 'error', status: 500, elapsedMs: Date.now() - call.started });
        return UNFINISHED;
      }
    } catch (error) {
      stage?.fail(errorType(error));
      report(error, { stage: 'callback', level: 'error', status: 500, elapsedMs: Date.now() - call.started });
      return FAILED;
    } finally {
      running.delete(call);
      if (running.size === 0) {
        clearInterval(watcher);
        watcher = undefined;
      }
    }
    stage?.end();
    return OK;
  }
}
