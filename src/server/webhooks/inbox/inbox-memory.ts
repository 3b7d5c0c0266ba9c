// What the inbox needs of Redis's settings: memory, read from INFO memory (which managed Redis
// services answer where they disable CONFIG), and the ACL; the messages that say what to change.
import { messageIn } from '../../../shared/message.js';
import type { InboxMemory } from './inbox-types.js';

/** INFO memory's text as stats().memory, or undefined when Redis refused INFO (an ACL without it). */
export function memoryOf(info: string): InboxMemory | undefined {
  const field = (name: string) => new RegExp('^' + name + ':(.*?)\\r?$', 'm').exec(info)?.[1];
  const used = field('used_memory');
  const policy = field('maxmemory_policy');
  if (used === undefined || policy === undefined) return undefined;
  return { usedBytes: Number(used), maxBytes: Number(field('maxmemory') ?? 0), policy };
}

/** Bytes as MiB with one decimal. */
export const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1) + ' MiB';

/** Above this share of maxmemory a worker warns: past maxmemory the handler answers 503. */
export const FULL_WARNING = 0.9;

/**
 * What is wrong with Redis's memory settings for the inbox, as a level and a message saying what
 * to do; undefined when nothing is. An evicting policy loses pushes that were acknowledged.
 */
export function memoryProblem(memory: InboxMemory): { level: 'error' | 'warn'; message: string } | undefined {
  const { usedBytes, maxBytes, policy } = memory;
  if (maxBytes === 0) return undefined; // no limit: Redis never evicts, nor refuses
  const evicts = policy.startsWith('allkeys-')
    ? "any key, the inbox's stored pushes included, and an acknowledged push is then lost"
    : policy.startsWith('volatile-')
      ? "keys that expire, the inbox's repeat marks, order locks and newest snapshots among them, so a repeat may run again and an older snapshot after a newer one"
      : undefined;
  if (evicts)
    return {
      level: 'error',
      message:
        "Redis's maxmemory-policy is " +
        policy +
        ': when full it evicts ' +
        evicts +
        ". Set maxmemory-policy noeviction on this Redis (CONFIG SET maxmemory-policy noeviction, or your provider's parameter group), or give the inbox a Redis of its own",
    };
  if (usedBytes < maxBytes * FULL_WARNING) return undefined;
  return {
    level: 'warn',
    message:
      'Redis holds ' +
      mib(usedBytes) +
      ' of its maxmemory ' +
      mib(maxBytes) +
      ': once full, new pushes are answered 503 (the service delivers them again) until the workers free room. Give Redis more memory, or more workers',
  };
}

/**
 * What a worker says when Redis answers no `maxmemory_policy` (INFO refused by an ACL without
 * +info, or a managed Redis that hides it): it cannot tell whether Redis evicts pushes.
 */
export const MEMORY_UNREAD = {
  level: 'warn',
  message:
    "could not read Redis's maxmemory-policy (Redis refused INFO memory, or its answer did not name it), so a policy that evicts acknowledged pushes would go unseen. Grant the inbox's Redis user +info (ACL SETUSER <user> +info), or check that the policy is noeviction with a user that may (channel-sandbox doctor --redis <url>)",
} as const;

/** The error an append gets from a full Redis (noeviction), said plainly. */
export function fullRedis(error: unknown): unknown {
  const message = messageIn({}, error);
  if (!/^OOM\b/.test(message)) return error;
  return new Error(
    'Redis is full (used memory above maxmemory, policy noeviction): the push was not stored, so it is answered 503 and the service delivers it again. The workers free room as they process pushes; if this lasts, give Redis more memory (Redis said: ' +
      message +
      ')',
  );
}

/**
 * How Redis and Valkey say their ACL refused a command or a key: NOPERM, or, inside a script, Redis's
 * "ERR The user executing the script can't run this command…" (or "…access at least one of the
 * keys…") and Valkey's "ERR ACL failure in script: User … has no permissions…".
 */
export const ACL_REFUSED = /^NOPERM\b|^ERR The user executing the script can't\b|^ERR ACL failure in script\b/;

/**
 * The error of a command Redis's ACL refused (NOPERM: a command, or a key outside the user's
 * patterns), said with what the inbox's user needs; other errors as they are. `tag`: what every
 * key of the inbox starts with.
 */
export function aclRefused(error: unknown, tag: string): unknown {
  const message = messageIn({}, error);
  if (!ACL_REFUSED.test(message)) return error;
  const keys = '~' + tag.replace(/[*?[\]\\]/g, '\\$&') + ':*';
  return new Error(
    "Redis's ACL refused the inbox (Redis said: " +
      message +
      '). The inbox runs each step as a Lua script (EVAL) over keys that all start with ' +
      tag +
      ':, so its Redis user needs ACL SETUSER <user> ' +
      keys +
      ' +eval +time +@read +@write (+info lets workers check maxmemory). If the ACL allows keys such as myapp:* only, pick a prefix that starts with it and holds a hash tag: prefix "myapp:{myapp}:" gives keys myapp:{myapp}:inbox:…',
  );
}
