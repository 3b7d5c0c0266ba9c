// The Redis inbox's operations over the user's client: one bounded script call each. The worker
// (inbox-worker.ts) and the operator's calls (redis-inbox.ts) go through these.
import { bounded } from '../../../shared/bounded.js';
import type { Commands } from '../../redis-client.js';
import type { DeadLetter, InboxPush, InboxStats } from './inbox-types.js';
import type { InboxSettings } from './inbox-options.js';
import { APPEND, DONE, FAIL, HEARTBEAT, LOST_BODY, READ, RELEASE, RENEW } from './inbox-scripts.js';
import { DEAD_LETTERS, DISCARD, PAUSE, REPLAY, STATS } from './inbox-admin-scripts.js';
import { aclRefused, fullRedis, memoryOf } from './inbox-memory.js';
import { holdBody } from './held-bodies.js';

/**
 * A push a worker took: run it (`go`); older than its order's newest and skipped (`stale`); or
 * evicted by Redis while it waited for a retry (`lost`: `id` is its dead letter's).
 */
export interface Entry {
  id: string;
  status: 'go' | 'stale' | 'lost';
  key: string;
  orderNo: string;
  /** '' when the snapshot has no time. */
  snapshotAt: string;
  receivedAt: number;
  attempt: number;
  body: string;
}

const GROUP = 'workers';
// How long a push waits while another push of its order runs.
const BUSY_MS = 250;
/** stats().workers counts the workers seen within this window. */
export const WORKERS_WINDOW_MS = 60_000;

// The body goes to Redis as the bytes received: encoding a long non-ASCII string again to UTF-8
// was a quarter of the receiver's CPU. Clients take bytes as a Buffer (node-redis and ioredis
// alike); where the runtime has none, the text.
const NodeBuffer = (globalThis as { Buffer?: { from(b: ArrayBufferLike, offset: number, length: number): Uint8Array; isBuffer(b: unknown): boolean } }).Buffer;
const bodyBytes = (push: InboxPush): string | Uint8Array =>
  NodeBuffer
    ? NodeBuffer.isBuffer(push.rawBody)
      ? push.rawBody
      : NodeBuffer.from(push.rawBody.buffer, push.rawBody.byteOffset, push.rawBody.byteLength)
    : push.body;

const str = (value: unknown): string =>
  typeof value === 'string' ? value : value instanceof Uint8Array ? new TextDecoder().decode(value) : String(value ?? '');
const num = (value: unknown): number => Number(str(value)) || 0;

export type InboxStore = ReturnType<typeof inboxStore>;

export function inboxStore(commands: Commands, settings: InboxSettings) {
  const { tag, keys, ttlSeconds, leaseMs, timeoutMs } = settings;
  const ttl = String(ttlSeconds);
  // `sent` learns of the command itself, which may outlive the timeout; `ms`: how long to wait for it.
  const call = (
    script: string,
    scriptKeys: string[],
    args: Array<string | Uint8Array>,
    what: string,
    sent?: (command: Promise<unknown>) => void,
    ms = timeoutMs,
  ) =>
    bounded(
      () => {
        const command = commands.scriptKeys(script, scriptKeys, args);
        sent?.(command);
        return command;
      },
      ms,
      () => new Error('Redis did not answer the inbox ' + what + ' within ' + ms + ' ms'),
    ).catch((error: unknown) => {
      throw aclRefused(error, tag);
    });

  return {
    async append(push: InboxPush): Promise<'stored' | 'duplicate'> {
      const args = [push.key, bodyBytes(push), push.orderNo ?? '', push.snapshotAt === undefined ? '' : String(push.snapshotAt), String(push.receivedAt)];
      try {
        // The client holds the body until Redis answers, past the timeout too: the handler counts it until then.
        const stored = await call(APPEND, [keys.stream, keys.push(push.key)], args, 'append', (command) => holdBody(push, command));
        return num(stored) === 1 ? 'stored' : 'duplicate';
      } catch (error) {
        throw fullRedis(error);
      }
    },

    /**
     * `cursor`: where the previous read's scan for lapsed leases stopped ('0-0' to start over);
     * `beat`: mark this worker seen; `running`: the ids it runs (what else it holds is freed). Nothing
     * is taken while the inbox is paused.
     */
    async read(consumer: string, count: number, cursor: string, beat: boolean, running: string[] = []) {
      const args = [tag, GROUP, consumer, String(count), String(leaseMs), String(BUSY_MS), ttl, cursor, beat ? '1' : '', LOST_BODY, ...running];
      const reply = (await call(READ, [keys.stream, keys.retry, keys.parked, keys.age, keys.workers, keys.dead], args, 'read')) as unknown[];
      // freed: the ids of what an earlier read took (its answer never arrived), then no entries.
      const freedIds = num(reply[3]) > 0 ? ((reply[4] as unknown[]) || []).map(str) : [];
      const entries: Entry[] = (freedIds.length ? [] : reply.slice(4)).map((row) => {
        const [id, status, key, orderNo, snapshotAt, receivedAt, attempt, body] = (row as unknown[]).map(str);
        return { id, status: status as Entry['status'], key, orderNo, snapshotAt, receivedAt: num(receivedAt), attempt: num(attempt), body };
      });
      // grouped: the consumer group exists now (a paused read could not make it in a full Redis).
      const [created, , paused, freed] = reply.map(num);
      return { created: created === 1, grouped: created !== 2, cursor: str(reply[1]) || '0-0', paused: paused === 1, freed: freed || 0, freedIds, entries };
    },

    /** A paused worker is still seen. */
    async heartbeat(consumer: string): Promise<void> {
      await call(HEARTBEAT, [keys.workers], [consumer], 'heartbeat');
    },

    /** The ids of `held` that are no longer this consumer's. */
    async renew(consumer: string, held: Entry[]): Promise<string[]> {
      const args = [tag, GROUP, consumer, String(leaseMs), ...held.flatMap((entry) => [entry.id, entry.orderNo])];
      return ((await call(RENEW, [keys.stream], args, 'lease renewal')) as unknown[]).map(str);
    },

    /**
     * False when the entry was no longer pending (another worker finished it, or Redis lost it).
     * `waitMs`: how long to wait for Redis's answer (an outcome, see inbox-runs.ts's persist).
     */
    async done(entry: Entry, waitMs = timeoutMs): Promise<boolean> {
      const args = [tag, GROUP, entry.id, entry.key, entry.orderNo, entry.snapshotAt, ttl];
      return num(await call(DONE, [keys.stream, keys.age], args, 'completion', undefined, waitMs)) === 1;
    },

    /**
     * `delayMs` -1 puts it aside as a dead letter. False when the entry is no longer this
     * consumer's; else true, or the dead letter's id.
     */
    async fail(consumer: string, entry: Pick<Entry, 'id' | 'attempt'>, delayMs: number, error: string, waitMs = timeoutMs): Promise<boolean | string> {
      const args = [tag, GROUP, consumer, entry.id, String(Math.max(-1, Math.round(delayMs))), error, String(entry.attempt)];
      const failKeys = [keys.stream, keys.retry, keys.parked, keys.dead, keys.age];
      const [stored, dead] = ((await call(FAIL, failKeys, args, 'failure', undefined, waitMs)) as unknown[]).map(str);
      return stored === '1' && (dead || true);
    },

    /**
     * Frees what this consumer holds beyond `keep` (a read whose answer was lost took it) for the
     * next read, without counting an attempt; `leaving`: the worker closes. The ids freed.
     */
    async release(consumer: string, keep: string[], leaving = false): Promise<string[]> {
      const args = [GROUP, consumer, String(leaseMs), leaving ? '1' : '0', ...keep];
      const freed = await call(RELEASE, [keys.stream, keys.workers], args, leaving ? 'consumer removal' : 'release');
      return Array.isArray(freed) ? freed.map(str) : [];
    },

    async stats(): Promise<InboxStats> {
      const reply = (await call(
        STATS,
        [keys.stream, keys.retry, keys.dead, keys.age, keys.workers],
        [GROUP, tag, String(WORKERS_WINDOW_MS)],
        'stats',
      )) as unknown[];
      const [length, held, retrying, dead, first, aged, now, workers, paused, info] = reply.map(str);
      // The first entry of the stream is the oldest in the order pushes arrived; one retried,
      // parked or replayed is in the age set until its outcome.
      const oldest = Math.min(first ? num(first.split('-')[0]) : Infinity, aged ? num(aged) : Infinity);
      const memory = memoryOf(info);
      return {
        pending: num(length) - num(held),
        processing: num(held),
        retrying: num(retrying),
        deadLetters: num(dead),
        oldestMs: oldest === Infinity ? 0 : Math.max(0, num(now) - oldest),
        workers: num(workers),
        paused: paused === '1',
        ...(memory ? { memory } : {}),
      };
    },

    async deadLetters(limit: number): Promise<DeadLetter[]> {
      const rows = (await call(DEAD_LETTERS, [keys.dead], [String(limit)], 'dead-letter list')) as unknown[][];
      return rows.map((row) => {
        const [id, key, orderNo, attempts, error, failedAt, receivedAt] = row.map(str);
        return { id, key, ...(orderNo ? { orderNo } : {}), attempts: num(attempts), error, failedAt: num(failedAt), receivedAt: num(receivedAt) };
      });
    },

    /**
     * Dead letters from `start` to `end` (stream ids, '(' before one for after it; `end` '' for the
     * newest now), up to `count`, back into the stream: how many went, the last id looked at ('' when
     * none), and the end used.
     */
    async replay(start: string, end: string, count: number): Promise<{ replayed: number; last: string; end: string }> {
      const reply = (await call(REPLAY, [keys.stream, keys.dead, keys.age], [tag, start, end, String(count), ttl], 'replay')) as unknown[];
      const [replayed, last, upTo] = reply.map(str);
      return { replayed: num(replayed), last, end: upTo };
    },

    async discard(id: string): Promise<boolean> {
      return num(await call(DISCARD, [keys.dead], [tag, id, ttl], 'discard')) === 1;
    },

    /** Every worker stops taking pushes (true) or takes them again (false). */
    async pause(on: boolean): Promise<void> {
      await call(PAUSE, [keys.paused], [on ? '1' : '0'], on ? 'pause' : 'resume');
    },
  };
}
