import { checkKeys, describeValue, fail } from '../../../shared/check.js';
import { commandsFor, type RedisClient } from '../../redis-client.js';
import type { DeadLetter, InboxProcessOptions, InboxPush, InboxStats, InboxWorker, WebhookInbox } from './inbox-types.js';
import { inboxSettings, type RedisInboxOptions } from './inbox-options.js';
import { inboxStore } from './inbox-store.js';
import { startWorker } from './inbox-worker.js';
import { inboxTelemetry } from '../../telemetry/inbox-telemetry.js';
import type { Crypto } from '../../crypto/crypto.js';

/** What {@link createRedisInbox} returns: the handler's `inbox`, and the workers' and operators' side. */
export interface RedisInbox extends WebhookInbox {
  /** Stores a verified push (the handler calls this): `stored`, or `duplicate` when it is queued, processed or a dead letter already. */
  append(push: InboxPush): Promise<'stored' | 'duplicate'>;
  /** Starts a worker in this process; run it in as many processes as you like. */
  process(options: InboxProcessOptions): InboxWorker;
  /** Counts: pending, processing, retrying, dead letters, the oldest push's age, workers seen, paused, Redis's memory. */
  stats(): Promise<InboxStats>;
  /** The oldest dead letters (default 100), without their bodies. */
  deadLetters(options?: { limit?: number }): Promise<DeadLetter[]>;
  /**
   * Dead letters back into the inbox, attempts counted from 0: the one with this `id`, those put
   * aside at or after `since` (a Date or epoch ms), or all. A replayed push older than a snapshot of
   * its order processed since is skipped as stale; one whose body Redis lost (evicted) stays.
   * Resolves to how many went back.
   */
  replay(which?: string | { since: Date | number }): Promise<number>;
  /** Drops a dead letter for good (a repeat of it is still acknowledged for `ttlSeconds`); false when there is none with that id. */
  discard(id: string): Promise<boolean>;
  /**
   * Every worker of this inbox, in any process, stops taking pushes until `resume()` (those running
   * finish): during an incident, while what the callbacks write to is down. Pushes are still
   * stored and answered. `stats().paused` says so; `channel-sandbox inbox pause` does the same.
   */
  pause(): Promise<void>;
  /** Workers take pushes again after `pause()`. */
  resume(): Promise<void>;
}

const DEAD_LETTER_ID = /^\d+-\d+$/;
const LATEST_DATE_MS = 8.64e15;

function checkId(what: string, id: unknown): string {
  if (typeof id === 'string' && DEAD_LETTER_ID.test(id)) return id;
  return fail(what + ': the id must be a dead letter id such as "1717000000000-0" (from deadLetters()); got ' + describeValue(id));
}

/** replay()'s argument as the first dead letter id it takes ('-' for the oldest), and whether only that one. */
function replayStart(which: unknown): { start: string; one: boolean } {
  const what = 'inbox.replay(which)';
  if (which === undefined) return { start: '-', one: false };
  if (typeof which === 'string') return { start: checkId(what, which), one: true };
  const since = (which as { since?: unknown } | null)?.since;
  if (typeof which === 'object' && which !== null) checkKeys(which as Record<string, unknown>, ['since'], what + ' option');
  const ms = since instanceof Date ? since.getTime() : since;
  // Up to the latest time a Date holds: beyond it a number is no time, and no stream id either.
  if (typeof ms !== 'number' || !(ms >= 0 && ms <= LATEST_DATE_MS))
    fail(
      what +
        ': pass a dead letter id, { since: Date or epoch ms }, or nothing for all; got ' +
        (typeof which === 'object' && which !== null ? '{ since: ' + describeValue(since) + ' }' : describeValue(which)),
    );
  return { start: Math.floor(ms) + '-0', one: false };
}

/** `createRedisInbox` (its JSDoc: src/server.ts), with `crypto` for its workers' ids. */
export function redisInbox(crypto: Pick<Crypto, 'randomId'>, redis: RedisClient, options?: RedisInboxOptions): RedisInbox {
  const what = 'createRedisInbox(redis, options)';
  const commands = commandsFor(redis, what);
  const settings = inboxSettings(options, commands.keyPrefix);
  const store = inboxStore(commands, settings);
  const telemetry = inboxTelemetry(settings.telemetry);
  return {
    append: (push) => store.append(push),
    process: (processOptions) => startWorker({ store, settings, options: processOptions, telemetry, consumer: crypto.randomId() }),
    stats: () => store.stats(),
    async deadLetters(listOptions = {}) {
      const limit = listOptions?.limit ?? 100;
      if (!(typeof limit === 'number' && Number.isInteger(limit) && limit >= 1 && limit <= 10_000))
        fail('inbox.deadLetters: limit must be a whole number from 1 to 10000; got ' + describeValue(limit));
      return store.deadLetters(limit);
    },
    async replay(which) {
      const { start, one } = replayStart(which);
      if (one) return (await store.replay(start, start, 1)).replayed;
      // Up to the newest dead letter as the replay starts: one that fails again while it runs is not taken twice.
      let total = 0;
      for (let from = start, end = ''; ;) {
        const batch = await store.replay(from, end, 100);
        total += batch.replayed;
        if (!batch.last || batch.last === batch.end) return total;
        [from, end] = ['(' + batch.last, batch.end];
      }
    },
    async discard(id) {
      return store.discard(checkId('inbox.discard(id)', id));
    },
    pause: () => store.pause(true),
    resume: () => store.pause(false),
  };
}
