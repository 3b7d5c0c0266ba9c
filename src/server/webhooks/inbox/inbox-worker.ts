// One worker process's share of an inbox: takes up to `concurrency` pushes at a time, runs the
// callbacks, renews its lease on each while they run, and stores each outcome (processed, retry
// with backoff, dead letter). What it holds when it dies goes to another worker once the lease lapses.
import { messageIn, messageOf } from '../../../shared/message.js';
import { safeReport } from '../../../shared/report.js';
import type { UnknownWebhookEvent, WebhookEvent } from '../../../schemas/logistics.js';
import { unprefixed } from '../../http/route.js';
import { isLogisticsUpdated } from '../parse.js';
import type { InboxContext, InboxErrorInfo, InboxProcessOptions, InboxWorker } from './inbox-types.js';
import { processSettings, type InboxSettings } from './inbox-options.js';
import type { Entry, InboxStore } from './inbox-store.js';
import type { InboxTelemetry, RunNote } from '../../telemetry/inbox-telemetry.js';

function defaultReport(error: unknown, info: InboxErrorInfo): void {
  if (info.level === 'info') return;
  const text = '[channel-sdk] inbox ' + info.stage + (info.id ? ' ' + info.id : '') + ': ' + messageIn(unprefixed, error);
  (info.level === 'error' ? console.error : console.warn)(text);
}

interface Run {
  entry: Entry;
  /** Settles once the outcome is stored (or given up on). */
  settled: Promise<void>;
  lost?: boolean;
  /** Its outcome is being stored: a renewal that finds it gone is no lapse. */
  settling?: boolean;
}

type Outcome = { ok: true } | { ok: false; error: unknown; timedOut?: boolean };

const sleep = (ms: number, wake: Promise<void>) => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), wake]).finally(() => clearTimeout(timer));
};

export function startWorker(store: InboxStore, settings: InboxSettings, options: InboxProcessOptions, telemetry?: InboxTelemetry): InboxWorker {
  const { onLogisticsUpdated, onEvent, onError, concurrency } = processSettings(options);
  const report = safeReport(onError || defaultReport);
  const { leaseMs, callbackTimeoutMs, maxAttempts, retryDelayMs, pollMs } = settings;
  const consumer = globalThis.crypto.randomUUID();
  const running = new Map<string, Run>();
  let closing = false;
  let seenGroup = false;
  // Resolved to wake the loop early: a slot came free, or close() was called.
  let wakeUp!: () => void;
  let woken = new Promise<void>((resolve) => (wakeUp = resolve));
  const wake = () => {
    wakeUp();
    woken = new Promise<void>((resolve) => (wakeUp = resolve));
  };

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
          {
            stage: 'lease',
            level: 'warn',
            id: run.entry.id,
            ...order(run.entry),
          },
        );
      }
    } catch (error) {
      report(error, { stage: 'redis', level: 'warn' });
    } finally {
      renewing = false;
    }
  }

  const order = (entry: Entry) => (entry.orderNo ? { orderNo: entry.orderNo } : {});

  /** Stores an outcome, retrying while Redis fails, for as long as the lease would hold it anyway. */
  async function persist(entry: Entry, write: () => Promise<boolean>, what: string): Promise<boolean | undefined> {
    const until = Date.now() + leaseMs;
    for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
      try {
        return await write();
      } catch (error) {
        if (Date.now() + wait >= until) {
          report(new Error('could not store that the push ' + what + ' (' + messageOf(error) + '); it runs again once its lease lapses'), {
            stage: 'redis',
            level: 'error',
            id: entry.id,
            ...order(entry),
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
    const where = { id: entry.id, attempt: entry.attempt, ...order(entry) };
    if (outcome.ok) {
      const pending = await persist(entry, () => store.done(entry), 'was processed');
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
    const stored = await persist(entry, () => store.fail(consumer, entry, delay, message), dead ? 'failed for good' : 'failed');
    if (stored === false) return; // another worker holds it now
    if (dead) {
      report(outcome.error, { stage: 'dead-letter', level: 'error', ...where });
      return;
    }
    report(outcome.error, { stage: outcome.timedOut ? 'timeout' : 'callback', level: 'warn', ...where });
  }

  function start(entry: Entry) {
    // Runs past maxAttempts only when workers died holding it (each death a delivery, no outcome):
    // a push that crashes its process would otherwise take every worker down, lease after lease.
    if (entry.attempt > maxAttempts) {
      const error = new Error('its worker died mid-callback (or lost its lease) on each of ' + maxAttempts + ' attempts; put aside without another run');
      running.set(entry.id, {
        entry,
        settling: true,
        settled: settle({ ...entry, attempt: maxAttempts }, { ok: false, error }).finally(() => (running.delete(entry.id), wake())),
      });
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
    const run: Run = {
      entry,
      settled: (telemetry ? telemetry.run(entry.attempt, attempt) : attempt()).finally(() => {
        running.delete(entry.id);
        wake();
      }),
    };
    running.set(entry.id, run);
  }

  const open = () => !closing;
  const loop = (async () => {
    let cursor = '0-0';
    for (let failures = 0; open();) {
      const free = concurrency - running.size;
      if (free <= 0) {
        await woken;
        continue;
      }
      let batch: Awaited<ReturnType<InboxStore['read']>>;
      try {
        batch = await store.read(consumer, free, cursor);
        cursor = batch.cursor;
        failures = 0;
      } catch (error) {
        report(error, { stage: 'redis', level: 'warn' });
        await sleep(Math.min(5000, pollMs * 2 ** ++failures), woken);
        continue;
      }
      if (batch.created && seenGroup) {
        report(
          new Error(
            "the inbox's stream and consumer group were gone (Redis lost its data: restarted without persistence, flushed, or failed over to an empty replica); pushes stored before are lost. Run Redis with appendonly yes",
          ),
          { stage: 'data-lost', level: 'error' },
        );
      }
      seenGroup = true;
      for (const entry of batch.entries) {
        if (entry.status === 'go') start(entry);
        else
          report(new Error('a newer snapshot of this order was processed already; skipped'), { stage: 'stale', level: 'info', id: entry.id, ...order(entry) });
      }
      if (batch.entries.length < free) await sleep(pollMs, woken);
    }
  })();

  let closed: Promise<void> | undefined;
  return {
    get running() {
      return running.size;
    },
    close() {
      closed ||= (async () => {
        closing = true;
        wake();
        await loop;
        await Promise.all([...running.values()].map((run) => run.settled));
        clearInterval(renewer);
        await store.leave(consumer).catch(() => {});
      })();
      return closed;
    },
  };
}
