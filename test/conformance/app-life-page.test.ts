// The app's life and the network (issue #45) on the browser entry, under happy-dom: the page's
// visibilitychange and navigator.onLine with the online/offline events, driven by the test (real
// Chromium: test/e2e/app-life.test.ts).
import { expect, test, vi } from 'vitest';
import { createClient } from '../../src/index.js';
import { createClock } from '../helpers/fake-service.js';
import { appLifeSuite, eventually, heldProvider } from './app-life.js';
import { fakeServices } from './suite.js';

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

const start = fakeServices();

test("a page restored from the back/forward cache offline (shown before the browser's offline event): the pre-warm asks no provider, a GET waits", async () => {
  visibility = 'visible';
  onLine = true;
  const clock = createClock(Date.now());
  const service = await start({ ttl: 600, clock });
  const provider = heldProvider(service);
  const client = createClient({ baseUrl: service.url, tokenProvider: provider, now: clock.now, retry: { delay: () => 1 } });
  await client.get('/first');
  const waits: string[] = [];
  client.on('wait', (e) => void waits.push(e.until));
  // Chromium: pagehide, visibilitychange (hidden), freeze; the network goes while the page is
  // cached; on restore: resume, visibilitychange (visible), pageshow, and only then `offline`.
  visibility = 'hidden';
  document.dispatchEvent(new Event('visibilitychange'));
  clock.advance(601_000);
  onLine = false;
  visibility = 'visible';
  document.dispatchEvent(new Event('visibilitychange'));
  const call = client.get('/after');
  await eventually(() => waits.length === 1, 'the GET waiting');
  expect({ provider: provider.calls.length, waits }).toEqual({ provider: 1, waits: ['online'] });
  window.dispatchEvent(new Event('offline'));
  onLine = true;
  window.dispatchEvent(new Event('online'));
  await call;
  expect(provider.calls.map((c) => c.forceRefresh)).toEqual([false, true]);
  expect(service.hits.at(-1)).toMatchObject({ path: '/after', token: service.issued[1] });
});
