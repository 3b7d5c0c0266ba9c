// @vitest-environment node
// doctor's Redis part over a command function (the CLI gives it the partner's own client, each
// command bounded: cli-redis.ts). What Redis does between two commands, not how doctor connects:
// that is doctor.integration.test.ts's and cli-redis.integration.test.ts's, on real redis-server.
import { expect, test } from 'vitest';
import { checkRedis } from '../../../src/testing/check/doctor-redis.js';

const INFO: Record<string, string> = {
  server: '# Server\r\nredis_version:7.2.4\r\n',
  replication: '# Replication\r\nrole:master\r\n',
  memory: '# Memory\r\nused_memory:1048576\r\nmaxmemory:0\r\nmaxmemory_policy:noeviction\r\n',
  persistence: '# Persistence\r\naof_enabled:1\r\nrdb_last_save_time:0\r\n',
};

test('a Redis that answers PING, then stops answering (frozen, too busy): the line says so, not a missing permission', async () => {
  const report = await checkRedis({
    url: 'redis://127.0.0.1:6379',
    command: async ([name, section]) => {
      if (name === 'PING') return 'PONG';
      if (name === 'INFO' && (section === 'server' || section === 'replication')) return INFO[section];
      throw Object.assign(new Error(`Redis did not answer ${name} within 5 s (frozen, or too busy)`), { code: 'ETIMEDOUT' }); // as cli-redis.ts bounds each command
    },
  });
  const info = report.checks.find((c) => c.id === 'info');
  expect(info?.status).toBe('fail');
  expect(info?.fix).toMatch(/stopped answering/);
  expect(info?.fix).not.toMatch(/let this user run INFO/);
});

test('INFO and CONFIG not allowed (an ACL user with -@dangerous, or commands the provider renamed) while PING and the inbox work: no line fails, each setting it cannot read is a warning naming why', async () => {
  for (const refusal of ["NOPERM User app has no permissions to run the 'info' command", "ERR unknown command 'INFO', with args beginning with: "]) {
    const report = await checkRedis({
      url: 'redis://app:pw@127.0.0.1:6379',
      command: async ([name]) => {
        if (name === 'PING') return 'PONG';
        throw new Error(name === 'INFO' ? refusal : refusal.replace(/info|INFO/, 'config'));
      },
      prefix: 'app:',
      stats: async () => ({ pending: 0, processing: 0, retrying: 0, deadLetters: 0, oldestMs: 0, workers: 1 }),
    });
    const line = (id: string) => report.checks.find((c) => c.id === id);
    // Before: ✗ reachable (the INFO refusal), nothing else checked, report.ok false.
    expect(report.ok).toBe(true);
    expect(line('reachable')).toMatchObject({ status: 'pass', detail: expect.stringMatching(/^PONG in \d+ ms: INFO is not allowed here/) });
    expect(line('maxmemory-policy')).toMatchObject({ status: 'warn', fix: expect.stringContaining('ACL SETUSER app +info') });
    expect(line('memory')?.status).toBe('skip');
    expect(line('persistence')).toMatchObject({ status: 'warn', detail: expect.stringMatching(/^neither INFO nor CONFIG GET is allowed here/) });
    expect(report.checks.map((c) => `${c.id}:${c.status}`).slice(-3)).toEqual(['dead-letters:pass', 'oldest:pass', 'workers:pass']);
  }
});

test('INFO not allowed but CONFIG GET answers: the settings are read from CONFIG, an evicting policy still fails', async () => {
  const settings: Record<string, string> = {
    'maxmemory-policy': 'allkeys-lru',
    maxmemory: String(64 * 1024 * 1024),
    appendonly: 'yes',
    appendfsync: 'everysec',
  };
  const report = await checkRedis({
    url: 'redis://127.0.0.1:6379',
    command: async ([name, , key]) => {
      if (name === 'PING') return 'PONG';
      if (name === 'CONFIG') return [key, settings[key]];
      throw new Error("NOPERM User default has no permissions to run the 'info' command");
    },
  });
  const line = (id: string) => report.checks.find((c) => c.id === id);
  expect(line('maxmemory-policy')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^allkeys-lru with maxmemory 64\.0 MB/) });
  expect(line('persistence')).toMatchObject({ status: 'pass', detail: expect.stringMatching(/^append-only file on \(appendfsync everysec/) });
  expect(report.ok).toBe(false);
});
