// The Redis inbox's Lua scripts for the operator's calls: stats, dead letters, replay, discard,
// pause. Keys and the rule that a script frees before it copies: inbox-scripts.ts.
import { PRELUDE } from './inbox-scripts.js';

/**
 * KEYS stream, retry, dead, age, workers; ARGV group, tag, workerWindowMs. { length, held,
 * retrying, dead, the first entry's id, the oldest age, now, workers seen within the window,
 * paused (0/1), INFO memory ('' when Redis refuses INFO) }. An age whose push was processed or
 * put aside by a worker of an earlier version (which knows no age set) is dropped on the way.
 */
export const STATS =
  PRELUDE +
  "local held = 0 local p = redis.pcall('xpending', KEYS[1], ARGV[1]) " +
  "if type(p) == 'table' and not p.err then held = p[1] end " +
  'local at = now() ' +
  "local first = redis.call('xrange', KEYS[1], '-', '+', 'count', 1) " +
  'local aged = {} ' +
  'for i = 1, 100 do ' +
  "  aged = redis.call('zrange', KEYS[4], 0, 0, 'withscores') " +
  "  local mark = aged[1] and redis.call('get', ARGV[2] .. ':push:' .. aged[1]) " +
  "  if mark ~= 'd' and mark ~= 'x' then break end " +
  "  redis.call('zrem', KEYS[4], aged[1]) aged = {} " +
  'end ' +
  "local info = redis.pcall('info', 'memory') if type(info) ~= 'string' then info = '' end " +
  "return { redis.call('xlen', KEYS[1]), held, redis.call('zcard', KEYS[2]), redis.call('xlen', KEYS[3]), " +
  "  first[1] and first[1][1] or '', aged[2] or '', tostring(at), redis.call('zcount', KEYS[5], at - tonumber(ARGV[3]), '+inf'), " +
  "  redis.call('exists', ARGV[2] .. ':paused'), info }";

/** KEYS dead; ARGV count. The oldest dead letters: { id, k, o, n, err, failed, at }... */
export const DEAD_LETTERS =
  PRELUDE +
  'local out = {} ' +
  "for _, e in ipairs(redis.call('xrange', KEYS[1], '-', '+', 'count', ARGV[1])) do " +
  '  local f = fields(e[2]) out[#out + 1] = { e[1], f.k, f.o, f.n, f.err, f.failed, f.at } ' +
  'end ' +
  'return out';

/**
 * KEYS stream, dead, age; ARGV tag, start, end ('': the newest dead letter now), count, ttl (unused: a queued push's mark lasts until its outcome). Dead
 * letters from start to end (ids, '(' for exclusive) back into the stream, attempts from 0; one
 * whose body Redis lost stays. { how many went back, the last id looked at ('' for none), end }.
 */
export const REPLAY =
  PRELUDE +
  'local S, D, A, T = KEYS[1], KEYS[2], KEYS[3], ARGV[1] ' +
  "local last = ARGV[3] if last == '' then local newest = redis.call('xrevrange', D, '+', '-', 'count', 1) " +
  "  if not newest[1] then return { 0, '', '' } end last = newest[1][1] end " +
  "local list = redis.call('xrange', D, ARGV[2], last, 'count', ARGV[4]) " +
  'local n = 0 ' +
  'for _, e in ipairs(list) do ' +
  '  local f = fields(e[2]) ' +
  "  if f.b and f.b ~= '' then " +
  "    redis.call('xdel', D, e[1]) " +
  "    redis.call('xadd', S, '*', 'k', f.k, 'b', f.b, 'o', f.o, 't', f.t, 'at', f.at, 'n', '0') " +
  "    redis.call('set', T .. ':push:' .. f.k, 'q') redis.call('zadd', A, 'nx', tonumber(f.s) or now(), f.k) " +
  '    n = n + 1 ' +
  '  end ' +
  'end ' +
  "return { n, list[#list] and list[#list][1] or '', last }";

/** KEYS dead; ARGV tag, id, ttl. Drops a dead letter (a repeat of it is still acknowledged for ttl): 1, or 0 when there is none. */
export const DISCARD =
  PRELUDE +
  "local e = redis.call('xrange', KEYS[1], ARGV[2], ARGV[2]) " +
  'if not e[1] then return 0 end ' +
  "redis.call('xdel', KEYS[1], ARGV[2]) redis.call('set', ARGV[1] .. ':push:' .. fields(e[1][2]).k, 'd', 'ex', ARGV[3]) " +
  'return 1';

/** KEYS paused; ARGV '1' to pause every worker, '0' to resume. Deleted first: a full Redis still takes it. */
export const PAUSE = PRELUDE + "redis.call('del', KEYS[1]) if ARGV[1] == '1' then redis.call('set', KEYS[1], now()) end return 1";
