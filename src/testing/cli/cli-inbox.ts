// `channel-sandbox inbox stats|dead|replay|discard`: the operator's side of a webhook inbox
// (createRedisInbox) from a shell. It talks to your Redis through the client your project has
// installed (ioredis, else node-redis), resolved from the current directory: the package bundles none.
import type { DeadLetter, InboxStats } from '../../server/webhooks/inbox/inbox-types.js';
import { wholeNumber, type Values } from './cli-args.js';
import { CliError } from './cli-client.js';
import { connect } from './cli-redis.js';

const when = (ms: number) => (ms ? new Date(ms).toISOString() : '-');

function describeStats(s: InboxStats): string {
  return [
    `pending       ${s.pending} (stored, not taken yet)`,
    `processing    ${s.processing} (held by a worker)`,
    `retrying      ${s.retrying} (waiting for their next attempt)`,
    `dead letters  ${s.deadLetters}${s.deadLetters ? ' (channel-sandbox inbox dead)' : ''}`,
    `oldest        ${s.oldestMs ? Math.round(s.oldestMs / 1000) + ' s' : '-'}`,
  ].join('\n');
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
  const actions = ['stats', 'dead', 'replay', 'discard'];
  if (!actions.includes(action)) throw new CliError(`inbox: what? channel-sandbox inbox ${actions.join('|')}${action ? ` (not "${action}")` : ''}`, 2);
  if ((action === 'stats' || action === 'dead') && id !== undefined) throw new CliError(`inbox ${action}: unexpected argument "${id}"`, 2);
  if (action === 'discard' && id === undefined)
    throw new CliError('inbox discard: which dead letter? channel-sandbox inbox discard <id> (ids: channel-sandbox inbox dead)', 2);
  if (action === 'replay' && id === undefined && !values.all)
    throw new CliError('inbox replay: which dead letter? channel-sandbox inbox replay <id>, or --all for every one', 2);
  const given = (values.redis as string | undefined) || process.env.REDIS_URL;
  if (!given)
    throw new CliError('inbox: where is Redis? --redis redis://host:6379 (or $REDIS_URL); a Cluster: --cluster --redis redis://a:7000,redis://b:7001', 2);
  const urls = given.split(',').map((u) => u.trim());
  for (const url of urls) if (!/^rediss?:\/\/[^/]/.test(url)) throw new CliError(`inbox: --redis must be a redis:// URL; got "${url}"`, 2);
  const limit = values.limit === undefined ? 100 : wholeNumber(values.limit as string, 'inbox dead: --limit', 1, 10_000);
  // Loaded here, not with the CLI: the other commands do without the server build.
  const { createRedisInbox } = await import('../../server/webhooks/inbox/redis-inbox.js');
  const redis = await connect(urls, !!values.cluster);
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
        const replayed = await store.replay(id);
        print({ replayed }, `${replayed} dead letter${replayed === 1 ? '' : 's'} back in the inbox`);
        return id !== undefined && replayed === 0 ? 1 : 0;
      }
      default: {
        const discarded = await store.discard(id);
        print({ discarded }, discarded ? `dead letter ${id} discarded` : `no dead letter ${id}`);
        return discarded ? 0 : 1;
      }
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    const message = error instanceof Error ? error.message.replace(/^\[channel-sdk\] /, '') : String(error);
    throw new CliError('inbox ' + action + ': ' + message, (error as Error | undefined)?.name === 'ConfigError' ? 2 : 1);
  } finally {
    await redis.close();
  }
}
