// The app's life and the network in a browser (issue #45): the page's visibilitychange, and
// navigator.onLine with the online/offline events (a worker's too). Elsewhere (Node, Deno, Bun)
// there is neither, and the client behaves as it always did.
import type { Platform } from '../core/platform.js';

/** A worker's (WebWorker lib): here only to tell a worker from a server runtime, which has none. */
declare const importScripts: unknown;

/** The page's visibility and network signals, each absent where the runtime lacks it. Adds no listener until a client watches. */
export function pageSignals(): Pick<Platform, 'visibility' | 'network'> {
  const signals: Pick<Platform, 'visibility' | 'network'> = {};
  if (typeof document !== 'undefined' && typeof document.visibilityState === 'string' && typeof document.addEventListener === 'function') {
    signals.visibility = {
      watch(report) {
        const read = () => report(document.visibilityState !== 'hidden');
        document.addEventListener('visibilitychange', read);
        read();
      },
    };
  }
  if (typeof navigator !== 'undefined' && typeof navigator.onLine === 'boolean' && typeof addEventListener === 'function') {
    signals.network = {
      watch(report) {
        let was: boolean;
        const read = () => report((was = navigator.onLine));
        addEventListener('online', read);
        addEventListener('offline', read);
        // A page restored from the back/forward cache or resumed from a freeze is shown before the
        // browser delivers the offline event queued meanwhile: its network is read on the
        // visibilitychange too, before the show's report (app-state.ts watches the network first),
        // so the pre-warm does not ask tokenProvider offline.
        const check = () => navigator.onLine !== was && read();
        if (signals.visibility) document.addEventListener('visibilitychange', check);
        // A worker: Chromium changes its navigator.onLine but fires no online or offline event
        // there, so the network is read on a short poll from the first use on. Not in a server
        // runtime (Deno, Bun) that has navigator.onLine: a timer there would keep the process up.
        else if (typeof importScripts === 'function') setInterval(check, 250);
        read();
      },
    };
  }
  return signals;
}
