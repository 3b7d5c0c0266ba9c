// doctor's Redis settings lines: maxmemory-policy, memory, persistence, read from INFO (which managed
// Redis services answer where they disable CONFIG), else from CONFIG GET. A user who may run
// neither (an ACL user with `-@dangerous`, a common recipe: INFO and CONFIG are both in that
// category) gets a warning naming what could not be read, not a failure: the inbox, the dedup
// store and the token cache need neither command.
import { messageIn } from '../../shared/message.js';
import { ACL_REFUSED } from '../../server/webhooks/inbox/inbox-memory.js';
import type { Reporter } from './check-report.js';

type Command = (args: string[]) => Promise<unknown>;

/**
 * Whether the command is not allowed here: refused by the ACL (NOPERM), or disabled (a managed
 * Redis's rename-command: "ERR unknown command"). Not a frozen Redis: that is ETIMEDOUT.
 */
export const notAllowed = (error: unknown) => {
  const message = messageIn({ unprefixed: true }, error);
  return ACL_REFUSED.test(message) || /^ERR unknown command\b/i.test(message);
};
/** How a line says so. */
export const INFO_NOT_ALLOWED = 'INFO is not allowed here (an ACL user without it, or a command the provider disabled)';

/** The ACL user in a redis:// URL, as ACL SETUSER names it. */
export const aclUser = (url: string) => /^rediss?:\/\/([^:@/]+)[:@]/.exec(url)?.[1] ?? 'default';

/** `INFO section` as key/value pairs; undefined where INFO is not allowed. */
export async function info(command: Command, section: string): Promise<Record<string, string> | undefined> {
  let reply: unknown;
  try {
    reply = await command(['INFO', section]);
  } catch (error) {
    if (notAllowed(error)) return undefined;
    throw error;
  }
  const fields: Record<string, string> = {};
  for (const line of String(reply).split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields[line.slice(0, colon)] = line.slice(colon + 1).trim();
  }
  return fields;
}

/** A CONFIG GET value, or undefined where CONFIG is disabled (managed Redis) or refused. */
async function config(command: Command, name: string): Promise<string | undefined> {
  try {
    const reply = await command(['CONFIG', 'GET', name]);
    if (Array.isArray(reply)) return reply.length >= 2 ? String(reply[1]) : undefined;
    if (reply && typeof reply === 'object')
      return (reply as Record<string, unknown>)[name] === undefined ? undefined : String((reply as Record<string, unknown>)[name]);
    return undefined;
  } catch {
    return undefined;
  }
}

const mb = (bytes: number) => (bytes >= 1024 * 1024 * 1024 ? `${(bytes / 1024 ** 3).toFixed(1)} GB` : `${(bytes / 1024 ** 2).toFixed(1)} MB`);
/** What a user denied INFO and CONFIG GET is told: what to look at instead, and the grant that lets doctor read it. */
const unread = (setting: string, url: string) =>
  `check that ${setting} in your provider's settings (or as an admin: redis-cli CONFIG GET ${setting.split(' ')[0]}), or, where an ACL is what refuses it, let doctor read it: ACL SETUSER ${aclUser(url)} +info`;
const NEITHER = 'neither INFO nor CONFIG GET is allowed here (an ACL user without them, or commands the provider disabled)';

/** The maxmemory-policy and memory lines. */
export async function memoryLines(r: Reporter, command: Command, url: string): Promise<void> {
  // Eviction: with a policy other than noeviction, a full Redis deletes keys, the inbox's included.
  const memory = await info(command, 'memory');
  const policy = memory?.maxmemory_policy ?? (await config(command, 'maxmemory-policy')) ?? '?';
  const max = Number(memory ? (memory.maxmemory ?? 0) : ((await config(command, 'maxmemory')) ?? 0));
  const title = 'maxmemory-policy keeps every key';
  const fix = 'CONFIG SET maxmemory-policy noeviction, and maxmemory-policy noeviction in redis.conf (a cache that needs eviction belongs on another Redis)';
  const loses = 'the inbox can lose acknowledged pushes and the dedup store forget handled ones (a token cache alone would not mind)';
  if (policy === 'noeviction')
    r.pass('maxmemory-policy', title, 'noeviction: a full Redis refuses writes (the push is then delivered again) instead of deleting keys');
  else if (policy === '?' && !memory)
    r.warn(
      'maxmemory-policy',
      title,
      `${NEITHER}: the policy is unknown, and an evicting one would mean ${loses}`,
      unread('maxmemory-policy is noeviction', url),
    );
  else if (policy === '?') r.warn('maxmemory-policy', title, 'neither INFO memory nor CONFIG GET tells the policy', fix);
  else if (max === 0) r.warn('maxmemory-policy', title, `${policy}, and no maxmemory yet: once a limit is set, Redis deletes keys when full: ${loses}`, fix);
  else r.fail('maxmemory-policy', title, `${policy} with maxmemory ${mb(max)}: a full Redis deletes keys: ${loses}`, fix);

  const memoryTitle = 'memory has room';
  if (!memory) return r.skip('memory', memoryTitle, `${INFO_NOT_ALLOWED}: the memory used is unknown`);
  const used = Number(memory.used_memory ?? 0);
  if (!max) return r.pass('memory', memoryTitle, `${mb(used)} used, no maxmemory (bounded by the machine)`);
  const share = used / max;
  const detail = `${mb(used)} of ${mb(max)} maxmemory (${Math.round(share * 100)}%)`;
  if (share < 0.8) return r.pass('memory', memoryTitle, detail);
  r.warn(
    'memory',
    memoryTitle,
    `${detail}: ${policy === 'noeviction' ? 'when full, writes are refused: the webhook handler answers 503 and the service delivers again' : 'when full, keys are deleted'}`,
    'raise maxmemory, or find what fills it (redis-cli --bigkeys)',
  );
}

/** The persistence line: an append-only file, snapshots only, or none. */
export async function persistenceLine(r: Reporter, command: Command, url: string): Promise<void> {
  const title = 'persistence keeps what was acknowledged';
  const fix = 'appendonly yes (redis-server --appendonly yes, or CONFIG SET appendonly yes and the same line in redis.conf)';
  const p = (await info(command, 'persistence')) ?? { aof_enabled: { yes: '1', no: '0' }[(await config(command, 'appendonly')) ?? ''] ?? '?' };
  if (p.aof_enabled === '?')
    return r.warn('persistence', title, `${NEITHER}: whether a restart keeps the pushes acknowledged is unknown`, unread('appendonly is yes', url));
  if (p.aof_last_write_status === 'err' || p.rdb_last_bgsave_status === 'err')
    return r.fail(
      'persistence',
      title,
      p.aof_last_write_status === 'err'
        ? 'the append-only file cannot be written (aof_last_write_status:err)'
        : 'the last snapshot failed (rdb_last_bgsave_status:err): Redis may refuse writes (MISCONF)',
      "look at Redis's log: the disk is full or not writable",
    );
  if (p.aof_enabled === '1') {
    const fsync = await config(command, 'appendfsync');
    const loss =
      fsync === 'always' ? 'nothing acknowledged is lost' : fsync === 'no' ? 'the OS decides when it reaches the disk' : 'at most about 1 s is lost in a crash';
    return r.pass('persistence', title, `append-only file on${fsync ? ` (appendfsync ${fsync}: ${loss})` : ''}`);
  }
  const save = await config(command, 'save');
  if (save === undefined)
    return r.warn(
      'persistence',
      title,
      'no append-only file (INFO persistence: aof_enabled:0); CONFIG is not available here, so the snapshot schedule is unknown: a restart loses what came since the last snapshot',
      fix,
    );
  r.warn(
    'persistence',
    title,
    save.trim()
      ? `snapshots only (save ${save}): a restart loses the pushes acknowledged since the last one`
      : 'none (no append-only file, no snapshots): a restart loses every stored push',
    fix,
  );
}
