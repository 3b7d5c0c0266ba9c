// The app's life and the network as one client sees them (issue #45): shown or hidden, online or
// offline, from the signals its entry supplies (platform.ts). A client follows them from its first
// use on: one never used adds no listener and no timer.
import type { Events } from '../events.js';
import type { Platform } from '../platform.js';

/** What a client knows of the app's life and the network, and who waits for it to change. */
export interface AppState {
  /** Starts following the platform's signals; only the first call does anything. */
  start(): void;
  /** As last reported; true until the platform says otherwise. */
  visible: boolean;
  online: boolean;
  /** Counts the hides seen: an attempt during which it changed was in flight while the app was hidden. */
  hides: number;
  /** The host fails the requests of a hidden app (mini-programs). */
  readonly interrupts: boolean;
  /** Until the network's state at the start is known (a host's getNetworkType answers later): settled then. */
  first?: Promise<void>;
  /** Called at every report of either signal (the calls waiting re-check then). */
  readonly waiters: Set<() => void>;
}

/** What a client's app state follows: the entry's signals, and what runs on show. */
export interface AppStateOptions extends Pick<Platform, 'visibility' | 'network'> {
  events: Events;
  /** The token manager's pre-warm. */
  warm: () => void;
}

/**
 * The app state of a client over `platform`'s signals, or undefined where it has none (Node,
 * a host without onAppShow and onNetworkStatusChange): the client then behaves as it always did.
 * `warm` runs on every report of a shown app with the network up: the token manager's pre-warm.
 */
export function createAppState({ visibility, network, events, warm }: AppStateOptions): AppState | undefined {
  if (!visibility && !network) return undefined;
  let started = false;
  const app: AppState = {
    start() {
      if (started) return;
      started = true;
      // The network first: a page reports both at once, and the visibility's report (the pre-warm)
      // must already know a page that starts offline (a token shared by another tab asked for offline).
      const first = network && network.watch((on) => report('online', on));
      if (first) app.first = first.then(() => void (app.first = undefined));
      if (visibility) visibility.watch((on) => report('visible', on));
    },
    visible: true,
    online: true,
    hides: 0,
    interrupts: !!(visibility && visibility.interrupts),
    waiters: new Set(),
  };

  function report(what: 'visible' | 'online', on: boolean): void {
    const was = app[what];
    app[what] = on;
    if (was !== on) {
      if (what === 'visible') {
        if (!on) app.hides++;
        events.emit('app', { visible: on });
      } else events.emit('network', { online: on });
    }
    // Every show (the launch's too) and every report of a network: a token that ended while the
    // app was away is refreshed now, before the first call after it needs one.
    if (on && app.visible && app.online) warm();
    app.waiters.forEach((wake) => wake());
  }

  return app;
}
