// The app's life as one client sees it (issue #45): shown or hidden, from the signal its entry
// supplies (platform.ts). A client follows it from its first use on: one never used adds no
// listener and no timer.
import type { Events } from './events.js';
import type { Platform } from './platform.js';

/** What a client knows of the app's life. */
export interface AppState {
  /** Starts following the platform's signal; only the first call does anything. */
  start(): void;
  /** As last reported; true until the platform says otherwise. */
  visible: boolean;
}

/**
 * The app state of a client over `platform`'s signal, or undefined where it has none (Node, a
 * host without onAppShow): the client then behaves as it always did. `warm` runs on every report
 * of a shown app: the token manager's pre-warm.
 */
export function createAppState(platform: Pick<Platform, 'visibility'>, events: Events, warm: () => void): AppState | undefined {
  const { visibility } = platform;
  if (!visibility) return undefined;
  let started = false;
  const app: AppState = {
    start() {
      if (started) return;
      started = true;
      visibility.watch((on) => {
        const was = app.visible;
        app.visible = on;
        if (was !== on) events.emit('app', { visible: on });
        // Every show (the launch's too): a token that ended while the app was away is refreshed
        // now, before the first call after it needs one.
        if (on) warm();
      });
    },
    visible: true,
  };
  return app;
}
