// A mini-program host's app life and network, host by host, as their documentation says
// (docs/maintainers/extending.md, "What each host does"): onAppShow/onAppHide, onNetworkStatusChange and getNetworkType with each host's
// payloads, and the controls a test drives them with (hide, show, setNetwork). createMockHost
// has them, and so do the test suite's emulations over real HTTP (test/helpers/hosts.ts). No I/O.
import type { MockHostKind } from './host-answers.js';

type Listener = (payload?: unknown) => void;

/** The host's own functions for the app's life and the network. */
export interface HostLifeFunctions {
  onAppShow(listener: Listener): void;
  onAppHide(listener: Listener): void;
  /** Without an argument: removes every listener (WeChat, Alipay, Douyin). */
  offAppShow(listener?: Listener): void;
  offAppHide(listener?: Listener): void;
  onNetworkStatusChange(listener: Listener): void;
  offNetworkStatusChange(listener?: Listener): void;
  /** Answers on a later turn, in the host's shape (Alipay: `networkAvailable`; Taro also returns a Promise). */
  getNetworkType(options?: { success?: Listener; fail?: Listener; complete?: Listener }): unknown;
}

/** A host's app life: its functions, and what a test does to it. */
export interface HostLife {
  readonly functions: HostLifeFunctions;
  /** Whether the app is in the foreground, and whether the network is up. */
  readonly visible: boolean;
  readonly isConnected: boolean;
  /** The app goes to the background: onAppHide's listeners run (nothing when already hidden). */
  hide(): void;
  /** The app comes back: `onShow` runs first (what the host delivers on resume), then onAppShow's listeners. */
  show(onShow?: () => void): void;
  /** The network comes or goes: onNetworkStatusChange's listeners run with the host's payload. */
  setNetwork(state: { isConnected: boolean }): void;
  /** How many listeners each function holds (a client never used must add none). */
  listeners(): { show: number; hide: number; network: number };
}

/** What each host passes to onAppShow's listeners (WeChat's fields; the others' subsets). */
const SHOW = { path: 'pages/index/index', scene: 1001, query: {}, shareTicket: undefined, referrerInfo: {} };

/** The app life of a `kind` host, shown and online to begin with. */
export function createHostLife(kind: MockHostKind): HostLife {
  const show: Listener[] = [];
  const hide: Listener[] = [];
  const network: Listener[] = [];
  let visible = true;
  let isConnected = true;
  const alipay = kind === 'my';
  // Alipay, Douyin (and, undocumented, Baidu) call onAppHide's listener with nothing; WeChat with { reason }.
  const hidePayload = alipay || kind === 'tt' || kind === 'swan' ? undefined : { reason: 0 };
  /** The network as each host reports it: Alipay upper-case with NOTREACHABLE; Douyin without isConnected (a claim of uni-app's docs). */
  const networkPayload = (getType: boolean): Record<string, unknown> => {
    if (alipay) {
      const networkType = isConnected ? 'WIFI' : 'NOTREACHABLE';
      return getType ? { networkAvailable: isConnected, networkType } : { isConnected, networkType };
    }
    const networkType = isConnected ? 'wifi' : 'none';
    return getType ? { networkType, errMsg: 'getNetworkType:ok' } : kind === 'tt' ? { networkType } : { isConnected, networkType };
  };
  const remove = (list: Listener[]) => (listener?: Listener) => {
    // Douyin: a listener registered twice loses only its earliest registration.
    if (!listener) list.length = 0;
    else if (list.indexOf(listener) >= 0) list.splice(list.indexOf(listener), 1);
  };
  const call = (list: Listener[], payload?: unknown) => {
    for (const listener of list.slice()) listener(payload);
  };

  return {
    functions: {
      onAppShow: (listener) => void show.push(listener),
      onAppHide: (listener) => void hide.push(listener),
      offAppShow: remove(show),
      offAppHide: remove(hide),
      onNetworkStatusChange: (listener) => void network.push(listener),
      offNetworkStatusChange: remove(network),
      getNetworkType(options = {}) {
        const answer = new Promise<unknown>((resolve) => setTimeout(() => resolve(networkPayload(true)), 0)).then((result) => {
          options.success?.(result);
          options.complete?.(result);
          return result;
        });
        return kind === 'Taro' ? answer : undefined;
      },
    },
    get visible() {
      return visible;
    },
    get isConnected() {
      return isConnected;
    },
    hide() {
      if (!visible) return;
      visible = false;
      call(hide, hidePayload);
    },
    show(onShow) {
      visible = true;
      onShow?.();
      call(show, alipay ? { path: SHOW.path, scene: SHOW.scene, query: SHOW.query, referrerInfo: SHOW.referrerInfo } : SHOW);
    },
    setNetwork(state) {
      if (!state || typeof state.isConnected !== 'boolean') throw new TypeError('setNetwork takes { isConnected: true | false }');
      isConnected = state.isConnected;
      call(network, networkPayload(false));
    },
    listeners: () => ({ show: show.length, hide: hide.length, network: network.length }),
  };
}
