// `channel-sandbox inbox stats|dead|replay|discard|pause|resume`: the operator's side of a webhook inbox
// (createRedisInbox) from a shell. It talks to your Redis through the client your project has
// installed (ioredis, else node-redis), resolved from the current directory: the package bundles none.
import { messageIn } from '../../shared/message.js';
import type { DeadLetter, InboxStats } from '../../server/webhooks/inbox/inbox-types.js';
import { memoryProblem, mib } from '../../server/webhooks/inbox/inbox-memory.js';
import { wholeNumber, type Values } from './cli-args.js';
import { CliError } from './cli-client.js';
import { connect, redisUrls } from './cli-redis.js';

const when = (ms: number) => (ms ? new Date(ms).toISOString() : '-');

function describeStats(s: InboxStats): string {
  const memory = s.memory;
  const problem = memory && memoryProblem(memory);
  return [
    `pending       ${s.pending} (stored, not taken yet)`,
    `processing    ${s.processing} (held by a worker)`,
    `retrying      ${s.retrying} (waiting for their next attempt)`,
    `dead letters  ${s.deadLetters}${s.deadLetters ? ' (channel-sandbox inbox dead)' : ''}`,
    `oldest        ${s.oldestMs ? Math.round(s.oldestMs / 1000) + ' s' : '-'}`,
    `workers       ${s.workers} (seen in the last minute)${s.paused ? ', paused (channel-sandbox inbox resume)' : ''}`,
    ...(memory
      ? [`redis memory  ${mib(memory.usedBytes)} of ${memory.maxBytes ? mib(memory.maxBytes) : 'no maxmemory'}, maxmemory-policy ${memory.policy}`]
      : [`redis memory  unknown: Redis refused INFO memory to this user, so maxmemory-policy (the inbox needs noeviction) is unchecked`]),
    ...(problem ? [`${problem.level}: ${problem.message}`] : []),
  ].join('\n');
}

/** --since: an ISO time, epoch ms, or an age such as 30m, 2h, 1d (that long ago). */
function sinceOf(text: string): number {
  const age = /^(\d+)([smhd])$/.exec(text);
  if (age) return Date.now() - Number(age[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[age[2] as 's' | 'm' | 'h' | 'd'];
  const ms = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  if (Number.isNaN(ms))
    throw new CliError(`inbox replay: --since must be a time (2024-06-01T12:00:00Z), epoch ms, or an age such as 30m, 2h, 1d; got "${text}"`, 2);
  return ms;
}

function describeDead(list: DeadLetter[]): string {
  if (!list.length) return 'no dead letters';
  return list
    .map((d) => `${d.id}  ${d.orderNo ?? '(no order)'}  ${d.attempts} attempts, failed ${when(d.failedAt)}, received ${when(d.receivedAt)}\n  ${d.error}`)
    .join('\n');
}

/** Runs `inbox <action> [id]`; resolves to the exit code. */
export async function inbox(args: string[], values: Values): Promise<number> {
  const [action, id] = args;
  const actions = ['stats', 'dead', 'replay', 'discard', 'pause', 'resume'];
  if (!actions.includes(action)) throw new CliError(`inbox: what? channel-sandbox inbox ${actions.join('|')}${action ? ` (not "${action}")` : ''}`, 2);
  if (['stats', 'dead', 'pause', 'resume'].includes(action) && id !== undefined) throw new CliError(`inbox ${action}: unexpected argument "${id}"`, 2);
  if (action === 'discard' && id === undefined)
    throw new CliError('inbox discard: which dead letter? channel-sandbox inbox discard <id> (ids: channel-sandbox inbox dead)', 2);
  const ways = [id !== undefined, !!values.all, values.since !== undefined].filter(Boolean).length;
  if (action === 'replay' && ways !== 1)
    throw new CliError(
      'inbox replay: which dead letters? channel-sandbox inbox replay <id> (the id a dead-letter report names), --since <time> (2024-06-01T12:00:00Z, or an age: 2h), or --all for every one',
      2,
    );
  const since = action === 'replay' && values.since !== undefined ? sinceOf(values.since as string) : undefined;
  const given = (values.redis as string | undefined) || process.env.REDIS_URL;
  if (!given)
    throw new CliError('inbox: where is Redis? --redis redis://host:6379 (or $REDIS_URL); a Cluster: --cluster --redis redis://a:7000,redis://b:7001', 2);
  const urls = redisUrls(given, 'inbox', values.redis ? '--redis' : 'REDIS_URL');
  const limit = values.limit === undefined ? 100 : wholeNumber(values.limit as string, 'inbox dead: --limit', 1, 10_000);
  // Loaded here, not with the CLI: the other commands do without the server build.
  const { createRedisInbox } = await import('../../server-node.js');
  const redis = await connect(urls, !!values.cluster, 'inbox', 10_000, values['key-prefix'] as string | undefined);
  try {
    const store = createRedisInbox(redis.client, values.prefix === undefined ? {} : { prefix: values.prefix as string });
    const print = (value: unknown, text: string) => console.log(values.json ? JSON.stringify(value) : text);
    switch (action) {
      case 'stats': {
        const stats = await store.stats();
        print(stats, describeStats(stats));
        return 0;
      }
      case 'dead': {
        const list = await store.deadLetters({ limit });
        print(list, describeDead(list));
        return 0;
      }
      case 'replay': {
        const replayed = await store.replay(since !== undefined ? { since } : id);
        const none = id !== undefined && replayed === 0;
        print(
          { replayed },
          none ? `no dead letter ${id} (ids: channel-sandbox inbox dead)` : `${replayed} dead letter${replayed === 1 ? '' : 's'} back in the inbox`,
        );
        return none ? 1 : 0;
      }
      case 'pause':
      case 'resume': {
        await (action === 'pause' ? store.pause() : store.resume());
        print(
          { paused: action === 'pause' },
          action === 'pause' ? 'every worker paused: pushes are stored, none is taken (channel-sandbox inbox resume)' : 'workers take pushes again',
        );
        return 0;
      }
      default: {
        const discarded = await store.discard(id);
        print({ discarded }, discarded ? `dead letter ${id} discarded` : `no dead letter ${id}`);
        return discarded ? 0 : 1;
      }
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    const message = messageIn({ unprefixed: true }, error);
    throw new CliError('inbox ' + action + ': ' + message, (error as Error | undefined)?.name === 'ConfigError' ? 2 : 1);
  } finally {
    await redis.close();
  }
}
