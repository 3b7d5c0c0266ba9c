// The Redis inbox's operations over the user's client: one bounded script call each. The worker
// (inbox-worker.ts) and the operator's calls (redis-inbox.ts) go through these.
import { bounded } from '../../../shared/bounded.js';
import type { Commands } from '../../redis-client.js';
import type { DeadLetter, InboxPush, InboxStats } from './inbox-types.js';
import type { InboxSettings } from './inbox-options.js';
import { APPEND, DEAD_LETTERS, DISCARD, DONE, FAIL, LEAVE, READ, RENEW, REPLAY, STATS } from './inbox-scripts.js';

/** A push a worker took: run it (`go`), or it was older than its order's newest and skipped (`stale`). */
export interface Entry {
  id: string;
  status: 'go' | 'stale';
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
  const call = (script: string, scriptKeys: string[], args: Array<string | Uint8Array>, what: string) =>
    bounded(
      () => commands.scriptKeys(script, scriptKeys, args),
      timeoutMs,
      () => new Error('Redis did not answer the inbox ' + what + ' within ' + timeoutMs + ' ms'),
    );

  return {
    async append(push: InboxPush): Promise<'stored' | 'duplicate'> {
      const args = [push.key, bodyBytes(push), push.orderNo ?? '', push.snapshotAt === undefined ? '' : String(push.snapshotAt), String(push.receivedAt), ttl];
      return num(await call(APPEND, [keys.stream, keys.push(push.key)], args, 'append')) === 1 ? 'stored' : 'duplicate';
    },

    /** `cursor`: where the previous read's scan for lapsed leases stopped ('0-0' to start over). */
    async read(consumer: string, count: number, cursor: string): Promise<{ created: boolean; cursor: string; entries: Entry[] }> {
      const args = [tag, GROUP, consumer, String(count), String(leaseMs), String(BUSY_MS), ttl, cursor];
      const reply = (await call(READ, [keys.stream, keys.retry, keys.parked], args, 'read')) as unknown[];
      const entries = reply.slice(2).map((row) => {
        const [id, status, key, orderNo, snapshotAt, receivedAt, attempt, body] = (row as unknown[]).map(str);
        return { id, status: status as Entry['status'], key, orderNo, snapshotAt, receivedAt: num(receivedAt), attempt: num(attempt), body };
      });
      return { created: num(reply[0]) === 1, cursor: str(reply[1]) || '0-0', entries };
    },

    /** The ids of `held` that are no longer this consumer's. */
    async renew(consumer: string, held: Entry[]): Promise<string[]> {
      const args = [tag, GROUP, consumer, String(leaseMs), ...held.flatMap((entry) => [entry.id, entry.orderNo])];
      return ((await call(RENEW, [keys.stream], args, 'lease renewal')) as unknown[]).map(str);
    },

    /** False when the entry was no longer pending (another worker finished it, or Redis lost it). */
    async done(entry: Entry): Promise<boolean> {
      const args = [tag, GROUP, entry.id, entry.key, entry.orderNo, entry.snapshotAt, ttl];
      return num(await call(DONE, [keys.stream], args, 'completion')) === 1;
    },

    /** `delayMs` -1 puts it aside as a dead letter. False when the entry is no longer this consumer's. */
    async fail(consumer: string, entry: Entry, delayMs: number, error: string): Promise<boolean> {
      const args = [tag, GROUP, consumer, entry.id, String(Math.max(-1, Math.round(delayMs))), error, String(entry.attempt)];
      return num(await call(FAIL, [keys.stream, keys.retry, keys.parked, keys.dead], args, 'failure')) === 1;
    },

    async leave(consumer: string): Promise<void> {
      await call(LEAVE, [keys.stream], [GROUP, consumer], 'consumer removal');
    },

    async stats(): Promise<InboxStats> {
      const [length, held, retrying, dead, oldest, , now] = (await call(STATS, [keys.stream, keys.retry, keys.dead], [GROUP], 'stats')) as unknown[];
      const since = oldest ? num(str(oldest).split('-')[0]) : num(now);
      return {
        pending: num(length) - num(held),
        processing: num(held),
        retrying: num(retrying),
        deadLetters: num(dead),
        oldestMs: Math.max(0, num(now) - since),
      };
    },

    async deadLetters(limit: number): Promise<DeadLetter[]> {
      const rows = (await call(DEAD_LETTERS, [keys.dead], [String(limit)], 'dead-letter list')) as unknown[][];
      return rows.map((row) => {
        const [id, key, orderNo, attempts, error, failedAt, receivedAt] = row.map(str);
        return { id, key, ...(orderNo ? { orderNo } : {}), attempts: num(attempts), error, failedAt: num(failedAt), receivedAt: num(receivedAt) };
      });
    },

    /** Dead letters back into the stream: `id`, or up to `count` of the oldest. How many went. */
    async replay(id: string, count: number): Promise<number> {
      return num(await call(REPLAY, [keys.stream, keys.dead], [tag, id, String(count), ttl], 'replay'));
    },

    async discard(id: string): Promise<boolean> {
      return num(await call(DISCARD, [keys.dead], [tag, id, ttl], 'discard')) === 1;
    },
  };
}
