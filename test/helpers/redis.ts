/**
 * A real redis-server (Debian's, /usr/bin/redis-server) for the tests: started on 127.0.0.1 at
 * a free port with no persistence, stopped after. Without it the Redis tests are skipped with
 * the reason (printed once per run); with CI=true they fail instead (.ci/run installs it).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisServerPath } from './redis-server.mjs';

export { startRedis, type RedisServer } from './redis-server.mjs';

export const hasRedis = existsSync(redisServerPath);
export const redisMissing = `no redis-server at ${redisServerPath}: install Debian's redis-server (apt-get install -y redis-server) or set REDIS_SERVER_PATH`;

if (!hasRedis && process.env.CI !== 'true') {
  // Every Redis test file loads this helper; the marker keeps the notice to one line per run.
  try {
    writeFileSync(join(tmpdir(), `channel-sdk-redis-skip-${process.ppid}`), '', { flag: 'wx' });
    console.warn(`[redis] Redis tests SKIPPED: ${redisMissing}. With CI=true this is a failure.`);
  } catch {
    // Already said in this run.
  }
}
