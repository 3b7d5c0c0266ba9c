// The app's life and the network (issue #45) on the browser entry, under happy-dom: the page's
// visibilitychange and navigator.onLine with the online/offline events, driven by the test (real
// Chromium: test/e2e/app-life.test.ts).
import { expect, test, vi } from 'vitest';
import { createClient } from '../../src/index.js';
import { appLifeSuite } from './app-life.js';

let visibility: DocumentVisibilityState = 'visible';
let onLine = true;
Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => visibility });
Object.defineProperty(navigator, 'onLine', { configurable: true, get: () => onLine });
// Counts the listeners clients add to the page's signals.
let added = 0;
for (const target of [document, window] as EventTarget[]) {
  const add = target.addEventListener.bind(target);
  target.addEventListener = (type: string, ...rest: [EventListenerOrEventListenerObject, (boolean | AddEventListenerOptions)?]) => {
    if (type === 'visibilitychange' || type === 'online' || type === 'offline') added++;
    add(type, ...rest);
  };
}

appLifeSuite('browser entry (page signals)', (options) => {
  visibility = 'visible';
  onLine = true;
  const from = added;
  let sent = 0;
  const make = (o: typeof options) =>
    createClient({
      ...o,
      fetch: (input, init) => {
        sent++;
        return fetch(input, init);
      },
    });
  return {
    client: make(options),
    add: make,
    hide: () => {
      visibility = 'hidden';
      document.dispatchEvent(new Event('visibilitychange'));
    },
    show: () => {
      visibility = 'visible';
      document.dispatchEvent(new Event('visibilitychange'));
    },
    setNetwork: (isConnected) => {
      onLine = isConnected;
      window.dispatchEvent(new Event(isConnected ? 'online' : 'offline'));
    },
    sent: () => sent,
    listeners: () => added - from,
  };
});

test('a client never used starts no timer and adds no listener to the page', () => {
  vi.useFakeTimers();
  const from = added;
  try {
    createClient({ baseUrl: 'https://channel.example.com', tokenProvider: () => 'a.b.c' });
    expect({ timers: vi.getTimerCount(), listeners: added - from }).toEqual({ timers: 0, listeners: 0 });
  } finally {
    vi.useRealTimers();
  }
});
