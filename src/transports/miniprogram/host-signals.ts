// The app's life and the network on a mini-program host (issue #45): its onAppShow/onAppHide,
// onNetworkStatusChange and getNetworkType (wx, my, tt, swan, qq, uni, Taro), found on the host
// object whose request() the client uses. A host without them (old base libraries, plugins, the
// Baidu web build) gives no signal, and the client behaves as it always did.
import type { AppSignal, Platform } from '../../core/platform.js';

// Mini-program code, as host-transport.ts: ES2015 built-ins only.

type HostFunction = (argument?: unknown) => unknown;

/** The platform's visibility and network signals over `host`'s functions, each absent where the host lacks it. */
export function hostSignals(host: Record<string, unknown> | undefined): Pick<Platform, 'visibility' | 'network'> {
  // Called on the host: some hosts' functions need their object as `this`.
  const fn = (name: string): HostFunction | undefined =>
    host && typeof host[name] === 'function' ? (argument) => (host[name] as HostFunction).call(host, argument) : undefined;
  const onShow = fn('onAppShow');
  const onHide = fn('onAppHide');
  const onNetwork = fn('onNetworkStatusChange');
  const getType = fn('getNetworkType');
  const signals: Pick<Platform, 'visibility' | 'network'> = {};
  if (onShow && onHide) {
    // A hidden app's requests are cut (WeChat: `request:fail interrupted` 5 s after the hide).
    signals.visibility = {
      interrupts: true,
      watch: (report) => quietly(() => (onShow(() => report(true)), onHide(() => report(false)))),
    };
  }
  if (onNetwork) {
    const network: AppSignal = {
      watch(report) {
        let changes = 0;
        quietly(() =>
          onNetwork((result: unknown) => {
            changes++;
            read(result, report);
          }),
        );
        if (!getType) return;
        const asked = changes;
        // The state at the start, which the first calls wait for (at most a second: a host that
        // never answers); an answer overtaken by a change event is stale.
        return new Promise((settle) => {
          const known = () => (clearTimeout(timer), settle(0));
          const answer = (result: unknown) => void (changes === asked && read(result, report), known());
          const timer = setTimeout(known, 1000);
          quietly(() => {
            const task = getType({ success: answer, fail: known }) as { then?: unknown; catch?: (f: () => void) => unknown } | undefined;
            // Taro's promisified getNetworkType rejects too when it fails.
            if (task && typeof task.then === 'function' && typeof task.catch === 'function') task.catch(() => {});
          });
        });
      },
    };
    signals.network = network;
  }
  return signals;
}

/**
 * Whether a host's network result says online: `isConnected` (onNetworkStatusChange), Alipay's
 * `networkAvailable` (its getNetworkType), else the type: `none` (WeChat family, uni on Alipay)
 * or Alipay's `NOTREACHABLE` is offline. Undefined when the result says nothing.
 */
export function onlineOf(result: unknown): boolean | undefined {
  if (!result || typeof result !== 'object') return undefined;
  const r = result as { isConnected?: unknown; networkAvailable?: unknown; networkType?: unknown };
  if (typeof r.isConnected === 'boolean') return r.isConnected;
  if (typeof r.networkAvailable === 'boolean') return r.networkAvailable;
  const type = typeof r.networkType === 'string' ? r.networkType.toLowerCase() : '';
  return type ? type !== 'none' && type !== 'notreachable' : undefined;
}

function read(result: unknown, report: (on: boolean) => void): void {
  const online = onlineOf(result);
  if (online !== undefined) report(online);
}

/** A host function that throws (a plugin, a host of another version) takes nothing from the client. */
function quietly(run: () => unknown): void {
  try {
    run();
  } catch {
    // no signal from this host
  }
}
