// The app's life on a mini-program host (issue #45): its onAppShow/onAppHide (wx, my, tt, swan, qq,
// uni, Taro), found on the host object whose request() the client uses. A host without them (old
// base libraries, plugins, the Baidu web build) gives no signal, and the client behaves as it
// always did.
import type { Platform } from '../../core/platform.js';

// Mini-program code, as host-transport.ts: ES2015 built-ins only.

type HostFunction = (argument?: unknown) => unknown;

/** The platform's visibility signal over `host`'s functions, absent where the host lacks them. */
export function hostSignals(host: Record<string, unknown> | undefined): Pick<Platform, 'visibility'> {
  // Called on the host: some hosts' functions need their object as `this`.
  const fn = (name: string): HostFunction | undefined =>
    host && typeof host[name] === 'function' ? (argument) => (host[name] as HostFunction).call(host, argument) : undefined;
  const onShow = fn('onAppShow');
  const onHide = fn('onAppHide');
  const signals: Pick<Platform, 'visibility'> = {};
  if (onShow && onHide) signals.visibility = { watch: (report) => quietly(() => (onShow(() => report(true)), onHide(() => report(false)))) };
  return signals;
}

/** A host function that throws (a plugin, a host of another version) takes nothing from the client. */
function quietly(run: () => unknown): void {
  try {
    run();
  } catch {
    // no signal from this host
  }
}
