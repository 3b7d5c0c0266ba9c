// One worker process's share of an inbox: the loop that takes up to `concurrency` pushes at a time
// (inbox-runs.ts runs them), pauses and resumes, keeps the worker seen, and checks Redis's memory
// settings. What it holds when it dies goes to another worker once the lease lapses.
import { messageIn } from '../../../shared/message.js';
import { safeReport } from '../../../shared/report.js';
import { unprefixed } from '../../http/route.js';
import type { InboxErrorInfo, InboxProcessOptions, InboxWorker } from './inbox-types.js';
import { processSettings, type InboxSettings } from './inbox-options.js';
import type { InboxStore } from './inbox-store.js';
import { MEMORY_UNREAD, memoryProblem } from './inbox-memory.js';
import { createRuns, orderOf } from './inbox-runs.js';
import type { InboxTelemetry } from '../../telemetry/inbox-telemetry.js';

// A worker marks itself seen this often (stats().workers counts those seen within a minute).
const BEAT_MS = 5000;
// Redis's memory settings are checked at start and this often; a problem is said again this often while it lasts.
const MEMORY_CHECK_MS = 60_000;
const MEMORY_REPEAT_MS = 10 * 60_000;
// A push whose every read alone lost its answer this many times is put aside as a dead letter.
const CUTS_ALONE = 3;

function defaultReport(error: unknown, info: InboxErrorInfo): void {
  if (info.level === 'info') return;
  let text = '[channel-sdk] inbox ' + info.stage + (info.id ? ' ' + info.id : '') + ': ' + messageIn(unprefixed, error);
  if (info.stage === 'dead-letter' && info.id) text += ' (to run it again: channel-sandbox inbox replay ' + info.id + ', or inbox.replay(id))';
  (info.level === 'error' ? console.error : console.warn)(text);
}

const sleep = (ms: number, wake: Promise<void>) => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), wake]).finally(() => clearTimeout(timer));
};

/** What one worker runs over: its inbox's store and settings, the caller's options, the telemetry, and its own id. */
export interface WorkerOptions {
  store: InboxStore;
  settings: InboxSettings;
  options: InboxProcessOptions;
  telemetry?: InboxTelemetry;
  /** Its consumer name in the stream's group: a random UUID. */
  consumer: string;
}

export function startWorker({ store, settings, options, telemetry, consumer }: WorkerOptions): InboxWorker {
  const { onLogisticsUpdated, onEvent, onError, concurrency } = processSettings(options);
  const report = safeReport(onError || defaultReport);
  const { pollMs } = settings;
  let closing = false;
  let paused = false;
  // Resolved to wake the loop early: a slot came free, resume() or close() was called.
  let wakeUp!: () => void;
  let woken = new Promise<void>((resolve) => (wakeUp = resolve));
  const wake = () => {
    wakeUp();
    woken = new Promise<void>((resolve) => (wakeUp = resolve));
  };
  const runs = createRuns({ store, settings, consumer, callbacks: { onLogisticsUpdated, onEvent }, report, telemetry, freed: wake });
  const { running } = runs;

  let said = { message: '', at: 0 };
  async function checkMemory() {
    try {
      const { memory } = await store.stats();
      // No policy to read is said too (warn): an evicting Redis would otherwise lose pushes unannounced.
      const problem = memory ? memoryProblem(memory) : MEMORY_UNREAD;
      if (!problem || (problem.message === said.message && performance.now() - said.at < MEMORY_REPEAT_MS)) return;
      said = { message: problem.message, at: performance.now() };
      report(new Error(problem.message), { stage: 'memory', level: problem.level });
    } catch {
      // The loop's own reads report Redis failing.
    }
  }

  // One body past Redis's client-output-buffer-limit cuts every read that takes it, however few the
  // read takes; freed without an attempt, it was taken again, read after read, for good, and the
  // pushes behind it never ran. Counted here by id when a read of that one alone lost its answer.
  const cuts = new Map<string, number>();
  async function cutAlone(freed: string[]) {
    const [id] = freed;
    const count = freed.length === 1 ? (cuts.get(id) || 0) + 1 : 0;
    if (count === 0) return;
    if (cuts.size > 100) cuts.clear();
    cuts.set(id, count);
    if (count < CUTS_ALONE) return;
    const message =
      'every read that took this push alone lost its answer (' +
      count +
      " times: the connection was cut, most likely by an answer past Redis's client-output-buffer-limit for normal clients, its body being larger); put aside without a run: raise that limit (client-output-buffer-limit normal 0 0 0), then replay it";
    try {
      const stored = await store.fail(consumer, { id, attempt: 0 }, -1, message);
      cuts.delete(id);
      if (stored) report(new Error(message), { stage: 'dead-letter', level: 'error', ...(typeof stored === 'string' ? { id: stored } : {}) });
    } catch (error) {
      report(error, { stage: 'redis', level: 'warn' });
    }
  }

  const open = () => !closing;
  const loop = (async () => {
    let cursor = '0-0';
    let seenGroup = false;
    let lastBeat = -Infinity;
    let lastCheck = -Infinity;
    // A read that failed may have taken pushes all the same (Redis ran it, its answer was late or
    // lost): they are freed before the next read, so they neither wait out a lease nor count an attempt.
    let release = false;
    // The read that failed asked for one push only.
    let alone = false;
    const backoff = (failures: number) => sleep(Math.min(5000, pollMs * 2 ** failures), woken);
    // How many pushes one read may take: halved after a read that failed (an answer of `concurrency`
    // bodies past Redis's client-output-buffer-limit cuts the connection, read after read), doubled
    // back after each that did not.
    let most = concurrency;
    for (let failures = 0; open();) {
      // performance.now(), not the wall clock: set back an hour, the worker was not marked seen for an hour.
      const now = performance.now();
      if (now - lastCheck >= MEMORY_CHECK_MS) {
        lastCheck = now;
        void checkMemory();
      }
      if (release) {
        try {
          const freed = await store.release(consumer, runs.kept());
          release = false;
          if (alone) await cutAlone(freed);
          cursor = '0-0';
        } catch (error) {
          report(error, { stage: 'redis', level: 'warn' });
          await backoff(++failures);
          continue;
        }
      }
      const free = Math.min(most, concurrency - running.size);
      if (paused || free <= 0) {
        if (now - lastBeat >= BEAT_MS)
          await store.heartbeat(consumer).then(
            () => (lastBeat = now),
            () => {},
          );
        await sleep(BEAT_MS, woken);
        continue;
      }
      const beat = now - lastBeat >= BEAT_MS;
      let batch: Awaited<ReturnType<InboxStore['read']>>;
      try {
        batch = await store.read(consumer, free, cursor, beat, runs.kept());
        cursor = batch.cursor;
        failures = 0;
        most = batch.freed ? Math.max(1, Math.floor(free / 2)) : Math.min(concurrency, most * 2);
        if (batch.freed)
          report(
            new Error(
              'the answer of a read that took ' +
                batch.freed +
                " pushes never arrived (the connection was cut: Redis's client-output-buffer-limit for normal clients below the bodies of one read?); freed, reading fewer at a time",
            ),
            { stage: 'redis', level: 'warn' },
          );
        if (beat) lastBeat = now;
        if (free === 1) await cutAlone(batch.freedIds);
      } catch (error) {
        report(error, { stage: 'redis', level: 'warn' });
        release = true;
        alone = free === 1;
        most = Math.max(1, Math.floor(free / 2));
        await backoff(++failures);
        continue;
      }
      if (batch.created && seenGroup) {
        report(
          new Error(
            "the inbox's stream and consumer group were gone (Redis lost its data: restarted without persistence, flushed, failed over to an empty replica, or evicted it under a maxmemory-policy other than noeviction); pushes stored before are lost, and an inbox that was paused is not any more (workers take pushes again). Run Redis with appendonly yes and maxmemory-policy noeviction",
          ),
          { stage: 'data-lost', level: 'error' },
        );
      }
      // A paused read makes the group too: a worker started paused (a deploy) that then sees it
      // gone knows that Redis lost what was stored meanwhile, and that the pause went with it.
      if (batch.grouped) seenGroup = true;
      for (const entry of batch.entries) {
        if (entry.status === 'go') runs.start(entry);
        else if (entry.status === 'lost')
          report(
            new Error(
              'Redis evicted this push while it waited for its next attempt (maxmemory-policy is not noeviction); it cannot run again' +
                (entry.orderNo ? ': fetch order ' + entry.orderNo + "'s logistics from the service instead" : '') +
                '. Set maxmemory-policy noeviction',
            ),
            { stage: 'data-lost', level: 'error', id: entry.id, ...orderOf(entry) },
          );
        else
          report(new Error('a newer snapshot of this order was processed already; skipped'), {
            stage: 'stale',
            level: 'info',
            id: entry.id,
            ...orderOf(entry),
          });
      }
      if (batch.paused) await sleep(Math.max(pollMs, 1000), woken);
      else if (batch.entries.length < free) await sleep(pollMs, woken);
    }
  })();

  let closed: Promise<void> | undefined;
  return {
    get running() {
      return running.size;
    },
    get paused() {
      return paused;
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      wake();
    },
    close() {
      closed ||= (async () => {
        closing = true;
        wake();
        await loop;
        await runs.drain();
        await store.release(consumer, runs.kept(), true).catch(() => {});
      })();
      return closed;
    },
  };
}
