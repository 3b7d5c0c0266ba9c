// The callbacks one worker runs: each push taken is run under a lease it renews while the
// callback runs, and its outcome (processed, retry with backoff, dead letter) is stored, retrying
// while Redis fails. The loop that takes pushes is inbox-worker.ts.
import { messageOf } from '../../../shared/message.js';
import type { UnknownWebhookEvent, WebhookEvent } from '../../../schemas/logistics.js';
import { isLogisticsUpdated } from '../parse.js';
import type { InboxContext, InboxErrorInfo, InboxProcessOptions } from './inbox-types.js';
import type { InboxSettings } from './inbox-options.js';
import type { Entry, InboxStore } from './inbox-store.js';
import type { InboxTelemetry, RunNote } from '../../telemetry/inbox-telemetry.js';

interface Run {
  entry: Entry;
  /** Settles once the outcome is stored (or given up on); never rejects. */
  settled: Promise<void>;
  lost?: boolean;
  /** Its outcome is being stored: a renewal that finds it gone is no lapse. */
  settling?: boolean;
}

type Outcome = { ok: true } | { ok: false; error: unknown; timedOut?: boolean };

export interface RunsOptions {
  store: InboxStore;
  settings: InboxSettings;
  consumer: string;
  callbacks: Pick<InboxProcessOptions, 'onLogisticsUpdated' | 'onEvent'>;
  report: (error: unknown, info: InboxErrorInfo) => void;
  telemetry?: InboxTelemetry;
  /** Called when a run is over: a slot came free. */
  freed: () => void;
}

export const orderOf = (entry: Entry) => (entry.orderNo ? { orderNo: entry.orderNo } : {});

export function createRuns({ store, settings, consumer, callbacks, report, telemetry, freed }: RunsOptions) {
  const { onLogisticsUpdated, onEvent } = callbacks;
  const { leaseMs, callbackTimeoutMs, maxAttempts, retryDelayMs } = settings;
  const running = new Map<string, Run>();
  // Runs over whose outcome could not be stored (Redis failing): they ran, so they are not freed
  // as untouched; they wait for their lease (and count an attempt). By entry id, when it ended.
  const unstored = new Map<string, number>();

  const renewer = setInterval(() => void renewAll(), Math.max(10, Math.floor(leaseMs / 3)));
  (renewer as { unref?: () => void }).unref?.();
  let renewing = false;
  async function renewAll() {
    const held = [...running.values()].filter((run) => !run.lost);
    if (renewing || held.length === 0) return;
    renewing = true;
    try {
      const lost = new Set(
        await store.renew(
          consumer,
          held.map((run) => run.entry),
        ),
      );
      for (const run of held) {
        if (!lost.has(run.entry.id) || run.lost || run.settling) continue;
        run.lost = true;
        report(
          new Error('the lease on this push lapsed while its callback ran (the event loop or Redis stalled past leaseMs); another worker may run it too'),
          { stage: 'lease', level: 'warn', id: run.entry.id, ...orderOf(run.entry) },
        );
      }
    } catch (error) {
      report(error, { stage: 'redis', level: 'warn' });
    } finally {
      renewing = false;
    }
  }

  /**
   * Stores an outcome, retrying while Redis fails, for as long as the lease would hold it anyway.
   * `write(ms)` waits up to `ms` for Redis's answer: the rest of that time, not timeoutMs. A write
   * sent again after a late answer queued behind the first on the same connection, ran after it,
   * and answered "no longer yours": a dead letter went unreported (its id, the callback's error).
   * Measured on performance.now(): a wall clock set back an hour kept a write trying for an hour and
   * its slot taken; set forward, the write was given up at its first failure and the push ran again.
   */
  async function persist<T>(entry: Entry, write: (ms: number) => Promise<T>, what: string): Promise<T | undefined> {
    const until = performance.now() + leaseMs;
    for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
      try {
        return await write(Math.max(1, until - performance.now()));
      } catch (error) {
        if (performance.now() + wait >= until) {
          unstored.set(entry.id, performance.now());
          report(new Error('could not store that the push ' + what + ' (' + messageOf(error) + '); it runs again once its lease lapses'), {
            stage: 'redis',
            level: 'error',
            id: entry.id,
            ...orderOf(entry),
          });
          return undefined;
        }
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  async function invoke(entry: Entry, signal: AbortSignal, note?: RunNote): Promise<Outcome> {
    let event: WebhookEvent;
    try {
      // Stored as received: a leading BOM (which the handler's check skipped) is dropped here too.
      event = JSON.parse(entry.body.charCodeAt(0) === 0xfeff ? entry.body.slice(1) : entry.body) as WebhookEvent;
    } catch (error) {
      return { ok: false, error: new Error('the stored body is not JSON (' + messageOf(error) + ')') };
    }
    if (note && typeof event?.event === 'string') note.event = event.event;
    const context: InboxContext = { id: entry.id, attempt: entry.attempt, dedupKey: entry.key, receivedAt: entry.receivedAt, signal };
    try {
      if (isLogisticsUpdated(event)) await onLogisticsUpdated(event, context);
      else if (onEvent) await onEvent(event as UnknownWebhookEvent, context);
      return { ok: true };
    } catch (error) {
      return { ok: false, error };
    }
  }

  async function settle(entry: Entry, outcome: Outcome): Promise<void> {
    const where = { id: entry.id, attempt: entry.attempt, ...orderOf(entry) };
    if (outcome.ok) {
      const pending = await persist(entry, (ms) => store.done(entry, ms), 'was processed');
      if (pending === false)
        report(new Error('another worker had finished this push already (its lease had lapsed here)'), { stage: 'lease', level: 'warn', ...where });
      return;
    }
    const dead = entry.attempt >= maxAttempts;
    let delay = -1;
    if (!dead) {
      try {
        delay = Math.max(0, Number(retryDelayMs(entry.attempt)) || 0);
      } catch {
        delay = 1000;
      }
    }
    const message = messageOf(outcome.error).slice(0, 1000);
    const stored = await persist(entry, (ms) => store.fail(consumer, entry, delay, message, ms), dead ? 'failed for good' : 'failed');
    if (stored === false) return; // another worker holds it now
    if (dead) {
      // The dead letter's id, not the entry's: what replay and discard take.
      report(outcome.error, { stage: 'dead-letter', level: 'error', ...where, ...(typeof stored === 'string' ? { id: stored } : {}) });
      return;
    }
    report(outcome.error, { stage: outcome.timedOut ? 'timeout' : 'callback', level: 'warn', ...where });
  }

  /** Runs `run` as the push's run until it settled, then frees its slot; what escapes is reported. */
  function track(entry: Entry, run: Run, work: () => Promise<void>) {
    running.set(entry.id, run);
    let work$: Promise<void>;
    try {
      work$ = work();
    } catch (error) {
      work$ = Promise.reject(error);
    }
    run.settled = work$
      .catch((error: unknown) => report(error, { stage: 'redis', level: 'error', id: entry.id, ...orderOf(entry) }))
      .finally(() => {
        running.delete(entry.id);
        freed();
      });
  }

  function start(entry: Entry) {
    const run: Run = { entry, settled: Promise.resolve() };
    // Runs past maxAttempts only when workers died holding it (each death a delivery, no outcome):
    // a push that crashes its process would otherwise take every worker down, lease after lease.
    if (entry.attempt > maxAttempts) {
      const error = new Error('its worker died mid-callback (or lost its lease) on each of ' + maxAttempts + ' attempts; put aside without another run');
      run.settling = true;
      track(entry, run, () => settle({ ...entry, attempt: maxAttempts }, { ok: false, error }));
      return;
    }
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<Outcome>((resolve) => {
      timer = setTimeout(() => {
        const error = new Error('the callback ran past callbackTimeoutMs (' + callbackTimeoutMs + ' ms); its signal is aborted and the push retried');
        controller.abort(error);
        resolve({ ok: false, error, timedOut: true });
      }, callbackTimeoutMs);
    });
    const attempt = (note?: RunNote) =>
      Promise.race([invoke(entry, controller.signal, note), timedOut]).then((outcome) => {
        clearTimeout(timer);
        run.settling = true;
        if (note) {
          note.outcome = outcome.ok ? 'processed' : entry.attempt >= maxAttempts ? 'dead_letter' : outcome.timedOut ? 'timeout' : 'retry';
          note.error = outcome.ok ? undefined : outcome.error;
        }
        return settle(entry, outcome);
      });
    track(entry, run, () => (telemetry ? telemetry.run(entry.attempt, attempt) : attempt()));
  }

  return {
    running,
    start,
    /** The entries this worker must keep holding: those running, and recent runs whose outcome could not be stored. */
    kept(): string[] {
      for (const [id, at] of unstored) if (performance.now() - at > 2 * leaseMs) unstored.delete(id);
      return [...running.keys(), ...unstored.keys()];
    },
    /** Every run settled (their outcomes stored or given up on), then renewals stop. */
    async drain(): Promise<void> {
      await Promise.all([...running.values()].map((run) => run.settled));
      clearInterval(renewer);
    },
  };
}
