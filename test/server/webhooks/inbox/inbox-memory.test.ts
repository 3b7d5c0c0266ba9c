/**
 * What the inbox makes of Redis's INFO memory (issue #43): the policy and headroom it needs, and
 * the messages that say what to change. On a real redis-server: redis-memory.integration.test.ts.
 */
import { describe, expect, test } from 'vitest';
import { aclRefused, fullRedis, memoryOf, memoryProblem } from '../../../../src/server/webhooks/inbox/inbox-memory.js';

const info = (used: number, max: number, policy: string) =>
  `# Memory\r\nused_memory:${used}\r\nused_memory_human:1M\r\nmaxmemory:${max}\r\nmaxmemory_human:0B\r\nmaxmemory_policy:${policy}\r\n`;

describe('memoryOf', () => {
  test('reads used_memory, maxmemory and maxmemory_policy', () => {
    expect(memoryOf(info(1_500_000, 3_145_728, 'noeviction'))).toEqual({ usedBytes: 1_500_000, maxBytes: 3_145_728, policy: 'noeviction' });
  });
  test('undefined when Redis refused INFO (an ACL without it): workers warn that the policy is unchecked (redis-memory.integration)', () => {
    expect(memoryOf('')).toBeUndefined();
  });
});

describe('memoryProblem', () => {
  test.each(['allkeys-lru', 'allkeys-lfu', 'allkeys-random'])('%s: an error naming the fix (acknowledged pushes may be evicted)', (policy) => {
    const problem = memoryProblem({ usedBytes: 1, maxBytes: 100, policy });
    expect(problem?.level).toBe('error');
    expect(problem?.message).toMatch(new RegExp('maxmemory-policy is ' + policy + ": when full it evicts any key, the inbox's stored pushes included"));
    expect(problem?.message).toMatch(
      /Set maxmemory-policy noeviction on this Redis \(CONFIG SET maxmemory-policy noeviction, or your provider's parameter group\)/,
    );
  });
  test.each(['volatile-lru', 'volatile-lfu', 'volatile-random', 'volatile-ttl'])(
    '%s: an error too (repeat marks, order locks and newest snapshots expire)',
    (policy) => {
      const problem = memoryProblem({ usedBytes: 1, maxBytes: 100, policy });
      expect(problem?.level).toBe('error');
      expect(problem?.message).toMatch(/an older snapshot after a newer one\. Set maxmemory-policy noeviction/);
    },
  );
  test('noeviction: nothing, until 90% full: a warning that new pushes will be refused', () => {
    expect(memoryProblem({ usedBytes: 89, maxBytes: 100, policy: 'noeviction' })).toBeUndefined();
    expect(memoryProblem({ usedBytes: 2_900_000, maxBytes: 3_145_728, policy: 'noeviction' })).toEqual({
      level: 'warn',
      message: expect.stringMatching(/^Redis holds 2\.8 MiB of its maxmemory 3\.0 MiB: once full, new pushes are answered 503/),
    });
  });
  test('no maxmemory: Redis neither evicts nor refuses, whatever its policy', () => {
    expect(memoryProblem({ usedBytes: 10 ** 9, maxBytes: 0, policy: 'allkeys-lru' })).toBeUndefined();
  });
});

test("fullRedis: Redis's OOM error said plainly, other errors as they are", () => {
  const oom = new Error("OOM command not allowed when used memory > 'maxmemory'.");
  expect(String(fullRedis(oom))).toMatch(/Redis is full .*answered 503 and the service delivers it again.*\(Redis said: OOM command not allowed/);
  const other = new Error('Connection is closed.');
  expect(fullRedis(other)).toBe(other);
});

test("aclRefused: Redis's ACL refusal (at the arguments, or inside a script) said with the ACL the inbox needs, other errors as they are", () => {
  const tag = '{my*app:inbox}';
  for (const said of [
    'NOPERM this user has no permissions to access one of the keys used as arguments',
    "ERR The user executing the script can't run this command or subcommand script: 44a1, on @user_script:1.",
    "ERR ACL failure in script: User inbox has no permissions to run the 'xautoclaim' command",
  ]) {
    const error = aclRefused(new Error(said), tag);
    expect(String(error)).toContain('(Redis said: ' + said + ')');
    expect(String(error)).toContain('its Redis user needs ACL SETUSER <user> ~{my\\*app:inbox}:* +eval +time +@read +@write');
  }
  const other = new Error('Connection is closed.');
  expect(aclRefused(other, tag)).toBe(other);
});
