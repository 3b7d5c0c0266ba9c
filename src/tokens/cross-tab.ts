import type { Obtained, TokenShare } from '../core/token-manager.js';

// Loaded on demand by the browser entry (a separate chunk): a client without crossTab never
// downloads it. Tokens travel between tabs of one origin over BroadcastChannel only; nothing
// is written to storage.

type Message =
  | { t: 'token'; token: string; at: number; id: string }
  | { t: 'busy' | 'idle' | 'hello'; id: string }
  | { t: 'clear' };

/** How long a tab that got the lock waits for a previous holder's announcement to arrive. */
const SETTLE_MS = 250;

/**
 * Tabs of one origin with the same baseUrl and key share one token: one provider call at a
 * time across them (Web Locks, every wait bounded by `wait` ms so a closed or hung tab never
 * blocks another), each new token announced to the others, and clearToken() in one clears
 * all. Undefined where BroadcastChannel or Web Locks are missing: each tab keeps its own.
 */
export function createCrossTab(baseUrl: string, key: string, wait: number): TokenShare | undefined {
  const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
  if (typeof BroadcastChannel === 'undefined' || !locks) return undefined;
  const name = 'channel-sdk ' + baseUrl + ' ' + key;
  const channel = new BroadcastChannel(name);
  const me = Math.random().toString(36).slice(2);
  // The newest token any tab announced; the tabs inside a provider call; clears seen.
  let latest: { token: string; at: number } | undefined;
  const busy = new Set<string>();
  let clears = 0;
  let adopt: (token: string, receivedAt: number) => void = () => {};
  let cleared = () => {};
  let wake = () => {};
  // oxlint-disable-next-line unicorn/require-post-message-target-origin -- BroadcastChannel.postMessage takes no target origin
  const post = (message: Message) => channel.postMessage(message);

  channel.onmessage = ({ data }: MessageEvent<Message>) => {
    if (data.t === 'clear') {
      clears++;
      latest = undefined;
      busy.clear();
      cleared();
    } else if (data.t === 'hello') {
      if (latest) post({ t: 'token', token: latest.token, at: latest.at, id: me });
    } else if (data.t === 'busy') busy.add(data.id);
    else {
      busy.delete(data.id);
      if (data.t === 'token' && (!latest || data.at > latest.at)) {
        latest = { token: data.token, at: data.at };
        adopt(data.token, data.at);
      }
    }
    wake();
  };
  // A tab opened later asks the others for the token they hold.
  post({ t: 'hello', id: me });

  /** Until no other tab is inside a provider call (its announcement may still be on the way), at most SETTLE_MS. */
  const settle = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, SETTLE_MS);
      function done() {
        clearTimeout(timer);
        // Still busy after SETTLE_MS while we hold the lock: those tabs closed mid-call.
        busy.clear();
        wake = () => {};
        resolve();
      }
      wake = () => (busy.size ? undefined : done());
      wake();
    });

  async function fetchAndAnnounce(fetch: () => Promise<Obtained>): Promise<Obtained> {
    const before = clears;
    post({ t: 'busy', id: me });
    try {
      const got = await fetch();
      // A token asked for before a logout (here or in another tab) is never announced.
      if (before === clears && (!latest || got.receivedAt > latest.at)) {
        latest = { token: got.token, at: got.receivedAt };
        post({ t: 'token', token: got.token, at: got.receivedAt, id: me });
      }
      return got;
    } finally {
      post({ t: 'idle', id: me });
    }
  }

  return {
    obtain(stale, fetch) {
      let granted = false;
      return locks
        .request(name, { signal: AbortSignal.timeout(wait) }, async () => {
          granted = true;
          await settle();
          // Another tab got a token after ours was: take it instead of asking again.
          const other = latest;
          if (other && (!stale || (other.token !== stale.token && other.at > stale.receivedAt))) {
            return { token: other.token, receivedAt: other.at, shared: true };
          }
          return fetchAndAnnounce(fetch);
        })
        .catch((error: unknown) => {
          // The lock was not granted within `wait` ms (a tab hangs mid-refresh): go alone.
          if (!granted) return fetchAndAnnounce(fetch);
          throw error;
        }) as Promise<Obtained>;
    },
    clear() {
      clears++;
      latest = undefined;
      post({ t: 'clear' });
    },
    connect(onAdopt, onCleared) {
      adopt = onAdopt;
      cleared = onCleared;
    },
  };
}
