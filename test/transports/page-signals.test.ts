// @vitest-environment node
// page-signals.ts outside a page: a worker reads navigator.onLine on a poll (Chromium fires no
// online/offline event there: test/e2e/worker-network.test.ts); a server runtime that has
// navigator.onLine and addEventListener (no document, no importScripts) gets no timer.
import { afterEach, expect, test, vi } from 'vitest';
import { pageSignals } from '../../src/transports/page-signals.js';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

function stubRuntime(worker: boolean) {
  const state = { onLine: true };
  vi.stubGlobal('navigator', {
    get onLine() {
      return state.onLine;
    },
  });
  vi.stubGlobal('addEventListener', () => {});
  if (worker) vi.stubGlobal('importScripts', () => {});
  return state;
}

test('in a worker the network is read on a poll: a change of navigator.onLine is reported without an event', () => {
  vi.useFakeTimers();
  const state = stubRuntime(true);
  const seen: boolean[] = [];
  pageSignals().network?.watch((on) => void seen.push(on));
  expect(seen).toEqual([true]);
  state.onLine = false;
  vi.advanceTimersByTime(250);
  expect(seen).toEqual([true, false]);
  vi.advanceTimersByTime(1000);
  expect(seen).toEqual([true, false]);
  state.onLine = true;
  vi.advanceTimersByTime(250);
  expect(seen).toEqual([true, false, true]);
});

test('a server runtime with navigator.onLine (no document, no importScripts) gets no timer', () => {
  vi.useFakeTimers();
  stubRuntime(false);
  const seen: boolean[] = [];
  pageSignals().network?.watch((on) => void seen.push(on));
  expect(seen).toEqual([true]);
  expect(vi.getTimerCount()).toBe(0);
});
