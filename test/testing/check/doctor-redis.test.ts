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

test('a Redis that refuses INFO memory (an ACL without it): the fix names the permission', async () => {
  const report = await checkRedis({
    url: 'redis://127.0.0.1:6379',
    command: async ([name, section]) => {
      if (name === 'PING') return 'PONG';
      if (name === 'INFO' && (section === 'server' || section === 'replication')) return INFO[section];
      throw new Error("NOPERM User doctor has no permissions to run the 'info' command");
    },
  });
  expect(report.checks.find((c) => c.id === 'info')?.fix).toMatch(/let this user run INFO/);
});
