// doctor's Redis part, over commands the CLI sends through the partner's own client: reachable,
// maxmemory-policy (an evicting Redis can delete the inbox's acknowledged pushes), memory,
// persistence (INFO persistence works where CONFIG is disabled), and with a prefix the inbox's
// state from its stats(): dead letters, the oldest waiting push, workers seen.
import { messageIn } from '../../shared/message.js';
import { createReport, duration, type CheckReport, type Reporter } from './check-report.js';
import { aclUser, info, INFO_NOT_ALLOWED, memoryLines, persistenceLine } from './doctor-redis-settings.js';

/** What the Redis part is given: a connection made by the CLI (or why there is none). */
export interface RedisTarget {
  /** The URL(s) as shown: any password masked. */
  url: string;
  /** Why no connection was made: no client installed, refused, timed out. */
  error?: string;
  /** One command on one node, its reply as the client gives it. */
  command?: (args: string[]) => Promise<unknown>;
  /** createRedisInbox(client, { prefix }).stats(), when a prefix was given. */
  stats?: () => Promise<Record<string, unknown>>;
  prefix?: string;
  /** How `channel-sandbox inbox` reaches this inbox: `--redis <url>`, `--cluster --redis <urls>`. */
  inboxArgs?: string;
  /** A node of a Redis Cluster: a replica is then a seed a Cluster client may start from, not a wrong URL. */
  cluster?: boolean;
  /**
   * The streams of inboxes with this prefix under another ioredis keyPrefix (every master scanned),
   * each with its keyPrefix and length; `complete` false when the scan stopped at its bound.
   */
  otherKeyPrefixes?: () => Promise<{ found: Array<{ keyPrefix: string; length: number }>; complete: boolean }>;
}

/** How Redis and Valkey refuse a missing or wrong password (AUTH, HELLO, or a command before either). */
export const CREDENTIALS_REFUSED = /\b(WRONGPASS|NOAUTH)\b|invalid password|invalid username-password/i;
/** What to do about it, here and in the message of every CLI command that connects. */
export const CREDENTIALS_FIX = "give Redis's password in the URL: redis://:PASSWORD@host:6379, or redis://USER:PASSWORD@host:6379 for an ACL user";

/** How doctor names a Cluster master marked `master,fail`, a rediss:// URL to a plain port (cli-redis.ts probes it), an ACL user without rights. */
export const [FAILED_MASTER, PLAIN_NOT_TLS] = ['the Cluster marks this master failed', 'it answers plain Redis on that port, not TLS'];
const noPermFix = (url: string) =>
  `your password is right, but this ACL user may not run what doctor reads with: ACL SETUSER ${aclUser(url)} +ping +info +config|get (+cluster|nodes in a Cluster), or give doctor a user that has them`;
const message = (error: unknown) => messageIn({ unprefixed: true }, error);
/** Older than this, the oldest waiting push is worth a look. */
const WAITING_MS = 60_000;

/** Runs the Redis part. */
export async function checkRedis(target: RedisTarget): Promise<CheckReport<'redis'>> {
  const r = createReport('redis', target.url + (target.prefix !== undefined ? ` (prefix ${target.prefix})` : ''));
  const { command } = target;
  const reachTitle = 'reachable';
  if (target.error !== undefined || !command) {
    r.fail(
      'reachable',
      reachTitle,
      target.error ?? 'no connection',
      target.error !== undefined && CREDENTIALS_REFUSED.test(target.error)
        ? CREDENTIALS_FIX
        : target.error?.startsWith(FAILED_MASTER)
          ? 'start that node again (its data and nodes.conf kept), or give each master a replica that can take over (redis-cli --cluster add-node … --cluster-slave); until then the Cluster answers CLUSTERDOWN'
          : target.error?.includes(PLAIN_NOT_TLS)
            ? 'use redis:// for this port (rediss:// is for a port that serves TLS: tls-port in redis.conf)'
            : /\bunknown command '?info\b/i.test(target.error ?? '')
              ? "this Redis has INFO disabled, and ioredis sends INFO as it connects (its ready check), then tries again without end: your app's ioredis clients need new Redis(url, { enableReadyCheck: false }) (node-redis sends no INFO)"
              : "start Redis, or pass its URL as --redis (REDIS_URL); run doctor in your app's folder, where ioredis or redis is installed",
    );
    return r.done();
  }
  try {
    const started = performance.now();
    const pong = await command(['PING']);
    const ms = Math.round(performance.now() - started);
    const [server, replication] = [await info(command, 'server'), await info(command, 'replication')];
    const version = server?.valkey_version ? `Valkey ${server.valkey_version}` : `Redis ${server?.redis_version ?? '?'}`;
    // INFO not allowed (an ACL user with -@dangerous, a renamed command): reachable all the same, and the app needs no INFO.
    if (!server || !replication)
      r.pass('reachable', reachTitle, `${String(pong)} in ${duration(ms)}: ${INFO_NOT_ALLOWED}, so the version, and whether it is a replica, are unknown`);
    else if (replication.role === 'slave' && target.cluster)
      r.pass(
        'reachable',
        reachTitle,
        `${String(pong)} in ${duration(ms)}: ${version}, a replica in the Cluster (a Cluster client writes to the masters, each checked below)`,
      );
    else if (replication.role === 'slave')
      r.fail(
        'reachable',
        reachTitle,
        `${version}, a replica (read-only)`,
        'point --redis at the primary: the inbox, the dedup store and the token cache write',
      );
    else r.pass('reachable', reachTitle, `${String(pong)} in ${duration(ms)}: ${version}`);
  } catch (error) {
    r.fail(
      'reachable',
      reachTitle,
      message(error),
      CREDENTIALS_REFUSED.test(message(error))
        ? CREDENTIALS_FIX
        : /\bNOPERM\b/.test(message(error))
          ? noPermFix(target.url)
          : 'check the URL, the password (redis://:password@host:6379) and that Redis runs',
    );
    return r.done();
  }

  try {
    await memoryLines(r, command, target.url);
    await persistenceLine(r, command, target.url);
    if (target.stats) await inboxLines(r, target.stats, `${target.inboxArgs ?? '--redis ' + target.url} --prefix ${target.prefix ?? ''}`);
    if (target.otherKeyPrefixes)
      await keyPrefixLine(
        r,
        target.otherKeyPrefixes,
        `${(target.inboxArgs ?? '--redis ' + target.url).replace(/ --key-prefix .*$/, '')} --prefix ${target.prefix ?? ''}`,
      );
  } catch (error) {
    r.fail(
      'info',
      'Redis answers INFO',
      message(error),
      // cli-redis.ts's bound on every command (ETIMEDOUT): Redis stopped answering after PING, not a permission.
      (error as { code?: unknown } | null)?.code === 'ETIMEDOUT'
        ? 'Redis stopped answering (frozen, or too busy: redis-cli --latency tells); run doctor again once it answers'
        : 'let this user run INFO (and CONFIG GET, where allowed): doctor reads the settings with them',
    );
  }
  return r.done();
}

async function inboxLines(r: Reporter, stats: () => Promise<Record<string, unknown>>, where: string): Promise<void> {
  let s: Record<string, unknown>;
  try {
    s = await stats();
  } catch (error) {
    return r.fail(
      'inbox',
      'the inbox answers',
      `stats() failed: ${message(error)}`,
      `check ${where}: the prefix given to createRedisInbox, and for a Cluster --cluster with its nodes`,
    );
  }
  const n = (key: string) => (typeof s[key] === 'number' ? (s[key] as number) : 0);
  const dead = n('deadLetters');
  if (dead)
    r.fail(
      'dead-letters',
      'no dead letters',
      `${dead} push${dead === 1 ? '' : 'es'} acknowledged and never processed (each failed every attempt)`,
      `see why: channel-sandbox inbox dead ${where}; fix the cause, then channel-sandbox inbox replay --all ${where}`,
    );
  else r.pass('dead-letters', 'no dead letters', 'none');
  const waiting = n('pending') + n('retrying');
  const oldest = n('oldestMs');
  const queue = `pending ${n('pending')}, processing ${n('processing')}, retrying ${n('retrying')}`;
  if (oldest >= WAITING_MS)
    r.warn(
      'oldest',
      'the oldest waiting push is recent',
      `${duration(oldest)} old (${queue})`,
      'are workers running (inbox.process) and keeping up? channel-sandbox inbox stats shows the queue',
    );
  else r.pass('oldest', 'the oldest waiting push is recent', `${oldest ? duration(oldest) + ' old' : waiting ? 'just stored' : 'nothing waiting'} (${queue})`);
  if (typeof s.workers !== 'number') return r.skip('workers', 'workers seen', "this version's inbox.stats() does not count workers");
  const workers = s.workers;
  if (workers > 0) r.pass('workers', 'workers seen', `${workers} recently`);
  else if (waiting)
    r.fail(
      'workers',
      'workers seen',
      `none recently, and ${waiting} push${waiting === 1 ? '' : 'es'} waiting`,
      'start inbox.process({ onLogisticsUpdated }) in a worker process',
    );
  else r.warn('workers', 'workers seen', 'none recently: pushes will wait until one runs', 'start inbox.process({ onLogisticsUpdated }) in a worker process');
}

/**
 * One inbox per prefix: a receiver and its workers whose ioredis clients differ in keyPrefix (a
 * deploy that changed one process) use different keys, so pushes pile up where no worker reads
 * them while each side's stats() looks calm on its own.
 */
async function keyPrefixLine(r: Reporter, others: NonNullable<RedisTarget['otherKeyPrefixes']>, where: string): Promise<void> {
  const title = 'one keyPrefix for this inbox';
  let scan: Awaited<ReturnType<typeof others>>;
  try {
    scan = await others();
  } catch (error) {
    return r.skip('key-prefixes', title, `SCAN failed: ${message(error)}`);
  }
  const waiting = scan.found.filter((other) => other.length > 0);
  const list = scan.found.map((other) => `${other.keyPrefix === '' ? 'no keyPrefix' : JSON.stringify(other.keyPrefix)} (${other.length} in its stream)`);
  const fix = (keyPrefix: string) =>
    `give the receiver (createWebhookHandler) and the workers (inbox.process) ioredis clients with the same keyPrefix; that inbox: channel-sandbox inbox stats ${where}${keyPrefix ? ' --key-prefix ' + shellWord(keyPrefix) : ''}`;
  if (waiting.length)
    r.fail(
      'key-prefixes',
      title,
      `the same prefix is in use under ${list.join(', ')}: pushes stored there are not seen by workers with this keyPrefix`,
      fix(waiting[0].keyPrefix),
    );
  else if (scan.found.length)
    r.warn(
      'key-prefixes',
      title,
      `the same prefix is in use under ${list.join(', ')}: a process with another keyPrefix stores or reads other keys`,
      fix(scan.found[0].keyPrefix),
    );
  else
    r.pass(
      'key-prefixes',
      title,
      scan.complete ? 'no other keyPrefix holds an inbox with this prefix' : 'none found in the keys scanned (the scan stopped at its bound)',
    );
}

/** `word` as one shell word: as it is when plain, else in single quotes. */
const shellWord = (word: string) => (/^[\w:.@{}/-]+$/.test(word) ? word : "'" + word.replace(/'/g, "'\\''") + "'");
