/**
 * The inbox's worker when the machine's wall clock jumps (NTP stepping it, a VM resumed, a user
 * setting the time): the waits it measures must not stretch or shrink with it. A fake store, fake
 * timers (vi.setSystemTime moves Date alone; performance.now goes on).
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { inboxSettings } from '../../../../src/server/webhooks/inbox/inbox-options.js';
import { createRuns } from '../../../../src/server/webhooks/inbox/inbox-runs.js';
import { startWorker } from '../../../../src/server/webhooks/inbox/inbox-worker.js';
import type { Entry, InboxStore } from '../../../../src/server/webhooks/inbox/inbox-store.js';
import type { InboxErrorInfo } from '../../../../src/server-node.js';
import { bodyOf, snapshot } from './inbox-helpers.js';

const HOUR = 3_600_000;
const settings = inboxSettings({ leaseMs: 1500, timeoutMs: 500, pollMs: 50 });
const entry: Entry = {
  id: '1-0',
  status: 'go',
  key: 'k1',
  orderNo: 'SO-1',
  snapshotAt: '',
  receivedAt: 0,
  attempt: 1,
  body: bodyOf(snapshot('SO-1', '2024-06-01T12:00:00+08:00')),
};
const jump = (ms: number) => vi.setSystemTime(Date.now() + ms);

describe('the inbox worker across wall-clock jumps', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function runsOver(done: (ms: number) => Promise<boolean>) {
    const reports: string[] = [];
    const store = { done, renew: async () => [] } as unknown as InboxStore;
    const runs = createRuns({
      store,
      settings,
      consumer: 'c1',
      callbacks: { onLogisticsUpdated: () => {} },
      report: (error, info) => void reports.push(info.stage + ': ' + String(error)),
      freed: () => {},
    });
    return { runs, reports };
  }

  test('the clock set back an hour while a processed push is stored, Redis failing: the worker gives up after a lease, not an hour and a lease', async () => {
    vi.useFakeTimers();
    let calls = 0;
    const { runs, reports } = runsOver(async () => {
      if (++calls === 1) jump(-HOUR);
      throw new Error('Redis is down');
    });
    runs.start(entry);
    await vi.advanceTimersByTimeAsync(3 * settings.leaseMs);
    expect(reports.filter((line) => line.includes('could not store'))).toHaveLength(1);
    expect(runs.running.size).toBe(0);
    await runs.drain();
  });

  test('the clock set forward an hour while a processed push is stored, Redis failing once: the write is tried again and stored (no second run)', async () => {
    vi.useFakeTimers();
    let calls = 0;
    const { runs, reports } = runsOver(async () => {
      if (++calls === 1) {
        jump(HOUR);
        throw new Error('Redis is down');
      }
      return true;
    });
    runs.start(entry);
    await vi.advanceTimersByTimeAsync(settings.leaseMs);
    expect(calls).toBe(2);
    expect(reports).toEqual([]);
    expect(runs.kept()).toEqual([]);
    await runs.drain();
  });

  test('the clock set back an hour: the worker still marks itself seen every few seconds (stats().workers does not drop to 0 for an hour)', async () => {
    vi.useFakeTimers();
    const beats: boolean[] = [];
    const store = {
      read: async (_consumer: string, _count: number, cursor: string, beat: boolean) => {
        beats.push(beat);
        return { created: false, grouped: true, cursor, paused: false, freed: 0, freedIds: [], entries: [] };
      },
      stats: async () => ({ memory: { policy: 'noeviction', maxBytes: 0, usedBytes: 0 } }),
      release: async () => [],
      heartbeat: async () => {},
    } as unknown as InboxStore;
    const reports: InboxErrorInfo[] = [];
    const worker = startWorker({ store, settings, consumer: 'c1', options: { onLogisticsUpdated: () => {}, onError: (_e, info) => void reports.push(info) } });
    await vi.advanceTimersByTimeAsync(100);
    expect(beats[0]).toBe(true);
    jump(-HOUR);
    beats.length = 0;
    await vi.advanceTimersByTimeAsync(12_000);
    expect(beats.filter(Boolean).length).toBeGreaterThanOrEqual(2);
    await worker.close();
  });
});
