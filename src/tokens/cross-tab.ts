import type { Obtained, TokenShare } from '../core/token-lifecycle/token-types.js';

// Loaded on demand by the browser entry (a separate chunk): a client without crossTab never
// downloads it. Tokens travel between tabs of one origin over BroadcastChannel only; nothing
// is written to storage.
//
// Every tab counts logouts in a generation `g`: a clear moves it on (the highest wins) and a
// token is only taken with the generation it was asked for in, so a token asked for before a
// logout, announced while the logout is under way, is never taken after it, here or in a tab
// opened later. Any script of the origin can post on the channel: what arrives is checked
// like a provider's answer and anything else is ignored.

type Message =
  | { t: 'token'; token: string; at: number; g: number; id: string }
  | { t: 'state'; g: number; id: string }
  | { t: 'busy'; id: string }
  | { t: 'idle'; id: string }
  | { t: 'hello'; id: string }
  | { t: 'clear'; g: number };

/** How long a tab that got the lock waits for a previous holder's announcement to arrive. */
const SETTLE_MS = 250;
/** How far ahead of this tab's clock another tab's receipt time may be (the tabs share the device clock). */
const AHEAD_MS = 60000;

const generation = (g: unknown): g is number => typeof g === 'number' && g >= 0 && g <= Number.MAX_SAFE_INTEGER && g % 1 === 0;

/** A message of this version, each field of its type, its token one a tokenProvider may return (`isToken`). */
function valid(m: unknown, isToken: (value: unknown) => boolean): m is Message {
  if (!m || typeof m !== 'object') return false;
  const { t, id, g, token, at } = m as Record<string, unknown>;
  if (t === 'clear') return generation(g);
  if (typeof id !== 'string') return false;
  if (t === 'token') return generation(g) && isToken(token) && typeof at === 'number' && at > 0 && at <= Date.now() + AHEAD_MS;
  return t === 'state' ? generation(g) : t === 'busy' || t === 'idle' || t === 'hello';
}

/**
 * Tabs of one origin with the same baseUrl and key share one token: one provider call at a
 * time across them (Web Locks, every wait bounded by `wait` ms so a closed or hung tab never
 * blocks another), each new token announced to the others, and clearToken() in one clears
 * all. Undefined where BroadcastChannel or Web Locks are missing: each tab keeps its own.
 * `isToken` is the core's check of a provider's answer, passed in so that this chunk imports
 * no code of the entry's (a shared chunk would move the whole entry out of dist/index.js).
 */
export function createCrossTab(baseUrl: string, key: string, wait: number, isToken: (value: unknown) => boolean): TokenShare | undefined {
  const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
  if (typeof BroadcastChannel === 'undefined' || !locks) return undefined;
  // Versioned: tabs of an older release (other messages) never talk to these.
  const name = 'channel-sdk/2 ' + baseUrl + ' ' + key;
  const channel = new BroadcastChannel(name);
  const me = Math.random().toString(36).slice(2);
  // The newest token any tab announced in this generation; the tabs inside a provider call;
  // logouts seen by this tab; the generation.
  let latest: { token: string; at: number } | undefined;
  const busy = new Set<string>();
  let clears = 0;
  let g = 0;
  // A logout, here or in another tab: nothing of the session before is waited for or taken.
  // `ended` settles at the next one: the lock holder lets go then.
  let ended!: Promise<void>;
  let end = () => {};
  const renew = () => {
    clears++;
    latest = undefined;
    busy.clear();
    end();
    ended = new Promise((resolve) => (end = resolve));
  };
  renew();
  let adopt: (token: string, receivedAt: number) => void = () => {};
  let cleared = () => {};
  let wake = () => {};
  // oxlint-disable-next-line unicorn/require-post-message-target-origin -- BroadcastChannel.postMessage takes no target origin
  const post = (message: Message) => channel.postMessage(message);

  channel.onmessage = ({ data }: MessageEvent<unknown>) => {
    if (!valid(data, isToken)) return;
    if (data.t === 'clear') {
      // Every clear clears, also one of a generation seen already (two tabs logging out at once).
      renew();
      if (data.g > g) g = data.g;
      cleared();
    } else if (data.t === 'hello') {
      post(latest ? { t: 'token', token: latest.token, at: latest.at, g, id: me } : { t: 'state', g, id: me });
    } else if (data.t === 'busy') busy.add(data.id);
    else if (data.t === 'idle') busy.delete(data.id);
    else {
      if (data.t === 'token') busy.delete(data.id);
      // A tab opened after a logout learns the generation from the others.
      if (data.g > g) {
        g = data.g;
        latest = undefined;
      }
      if (data.t === 'token' && data.g === g && (!latest || data.at > latest.at)) {
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
    const gen = g;
    post({ t: 'busy', id: me });
    try {
      const got = await fetch();
      // A token asked for before a logout (here or in another tab) is never announced.
      if (before === clears && gen === g && (!latest || got.receivedAt > latest.at)) {
        latest = { token: got.token, at: got.receivedAt };
        post({ t: 'token', token: got.token, at: got.receivedAt, g, id: me });
      }
      return got;
    } finally {
      post({ t: 'idle', id: me });
    }
  }

  return {
    obtain(stale, fetch) {
      let granted = false;
      let work: Promise<Obtained> | undefined;
      const session = clears;
      const over = ended;
      // Not AbortSignal.timeout(): Chrome 93-102, Firefox 96-99 and Safari 15.4-15.6 have Web Locks without it.
      const stop = new AbortController();
      const timer = setTimeout(() => stop.abort(), wait);
      return locks
        .request(name, { signal: stop.signal }, async () => {
          clearTimeout(timer);
          granted = true;
          await settle();
          // A logout since this call began: its token would be dropped, and the next session's
          // calls (here and in the other tabs) must not wait for it to ask the provider.
          if (session !== clears) return;
          // Another tab got a token after ours was: take it instead of asking again.
          const other = latest;
          if (other && (!stale || (other.token !== stale.token && other.at > stale.receivedAt))) {
            return { token: other.token, receivedAt: other.at, shared: true };
          }
          work = fetchAndAnnounce(fetch);
          // A logout frees the lock at once; this call still ends (bounded by tokenTimeout) for its callers.
          return Promise.race([work, over]);
        })
        .then(
          // Nothing after a logout bail-out: its caller's session ended, so the token manager drops the answer unread.
          (got) => work || got,
          (error: unknown) => {
            // The lock was not granted within `wait` ms (a tab hangs mid-refresh): go alone.
            if (!granted) return fetchAndAnnounce(fetch);
            throw error;
          },
        ) as Promise<Obtained>;
    },
    clear() {
      renew();
      // Saturates instead of losing precision after a forged huge generation: a clear still clears.
      if (g < Number.MAX_SAFE_INTEGER) g++;
      post({ t: 'clear', g });
    },
    connect(onAdopt, onCleared) {
      adopt = onAdopt;
      cleared = onCleared;
    },
  };
}
