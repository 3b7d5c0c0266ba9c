// The app's life in a browser (issue #45): the page's visibilitychange. Elsewhere (Node, Deno, Bun,
// workers) there is none, and the client behaves as it always did.
import type { Platform } from '../core/platform.js';

/** The page's visibility signal, absent where the runtime has no document. Adds no listener until a client watches. */
export function pageSignals(): Pick<Platform, 'visibility'> {
  const signals: Pick<Platform, 'visibility'> = {};
  if (typeof document !== 'undefined' && typeof document.visibilityState === 'string' && typeof document.addEventListener === 'function') {
    signals.visibility = {
      watch(report) {
        const read = () => report(document.visibilityState !== 'hidden');
        document.addEventListener('visibilitychange', read);
        read();
      },
    };
  }
  return signals;
}
