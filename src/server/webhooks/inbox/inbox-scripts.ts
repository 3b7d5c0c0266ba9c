// The Redis inbox's Lua scripts. Every step that reads and writes is one script, so it is atomic;
// every key shares one hash tag (ARGV[1] is that tag), so a Redis Cluster runs them on one master.
//
// Keys under the tag T:
//   T:stream           the Redis Stream of pushes; consumer group "workers". Fields: k (dedupKey),
//                      b (body), o (order_no or ''), t (snapshot time ms or ''), at (received ms),
//                      n (failed attempts before this entry)
//   T:retry, T:parked  pushes waiting for their next attempt: ZSET dedupKey -> due ms, HASH dedupKey -> fields
//   T:dead             dead letters: a stream, fields as above plus err and failed
//   T:push:<k>         q queued (or running), d processed (EX ttl), x dead letter
//   T:order:<o>        the entry id running a push of order o (PX lease): one at a time per order
//   T:latest:<o>       snapshot time of the newest push of order o processed (EX ttl)
//
// Times come from the Redis server (TIME), so workers with skewed clocks agree.

const PRELUDE =
  'local function fields(list) local f = {} for j = 1, #list, 2 do f[list[j]] = list[j + 1] end return f end ' +
  "local function now() local t = redis.call('time') return t[1] * 1000 + math.floor(t[2] / 1000) end " +
  "local function unlock(T, o, id) if o ~= '' then local ok = T .. ':order:' .. o if redis.call('get', ok) == id then redis.call('del', ok) end end end " +
  "local function mine(S, g, c, id) local p = redis.pcall('xpending', S, g, id, id, 1) return type(p) == 'table' and not p.err and p[1] ~= nil and p[1][2] == c end ";

/** KEYS stream, push:<k>; ARGV k, body, order, t, at, ttl. 1 stored, 0 already there. */
export const APPEND =
  "if redis.call('exists', KEYS[2]) == 1 then return 0 end " +
  "redis.call('xadd', KEYS[1], '*', 'k', ARGV[1], 'b', ARGV[2], 'o', ARGV[3], 't', ARGV[4], 'at', ARGV[5], 'n', '0') " +
  "redis.call('set', KEYS[2], 'q', 'ex', ARGV[6]) return 1";

/**
 * KEYS stream, retry, parked; ARGV tag, group, consumer, count, leaseMs, busyMs, ttl, cursor.
 * Moves due retries into the stream, takes pushes whose lease lapsed (XAUTOCLAIM from `cursor`, so
 * that successive reads walk the whole pending list however long), then new ones (XREADGROUP), up
 * to count. Per push of an order: older than the newest processed -> stale (acknowledged, not
 * run); another push of the order running -> parked for busyMs (not an attempt); else the order's
 * lock is taken. Answers { created, next cursor, {id, 'go'|'stale', k, o, t, at, attempt, body}... }.
 */
export const READ =
  PRELUDE +
  'local S, R, P = KEYS[1], KEYS[2], KEYS[3] ' +
  'local T, g, c, count, lease, busy, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6]), ARGV[7] ' +
  'local at = now() ' +
  "for _, k in ipairs(redis.call('zrangebyscore', R, '-inf', at, 'limit', 0, 100)) do " +
  "  local data = redis.call('hget', P, k) " +
  "  if data then local f = cjson.decode(data) redis.call('xadd', S, '*', 'k', k, 'b', f.b, 'o', f.o, 't', f.t, 'at', f.at, 'n', f.n) redis.call('hdel', P, k) end " +
  "  redis.call('zrem', R, k) " +
  'end ' +
  'local created = 0 ' +
  "local claimed = redis.pcall('xautoclaim', S, g, c, lease, ARGV[8], 'count', count) " +
  'if claimed.err then ' +
  "  if not string.find(claimed.err, 'NOGROUP') then return redis.error_reply(claimed.err) end " +
  "  redis.call('xgroup', 'create', S, g, '0', 'mkstream') created = 1 claimed = { '0-0', {} } " +
  'end ' +
  'local entries = {} ' +
  'for _, e in ipairs(claimed[2]) do if type(e) == "table" and type(e[2]) == "table" then entries[#entries + 1] = e end end ' +
  'local reclaimed = #entries ' +
  'if #entries < count then ' +
  "  local r = redis.call('xreadgroup', 'group', g, c, 'count', count - #entries, 'streams', S, '>') " +
  '  if r then for _, e in ipairs(r[1][2]) do entries[#entries + 1] = e end end ' +
  'end ' +
  'local out = { created, claimed[1] } ' +
  'for i, e in ipairs(entries) do ' +
  '  local id, f = e[1], fields(e[2]) ' +
  '  local deliveries = 1 ' +
  "  if i <= reclaimed then local p = redis.call('xpending', S, g, id, id, 1) if p[1] then deliveries = p[1][4] end end " +
  '  local attempt = tonumber(f.n) + deliveries ' +
  "  local status = 'go' " +
  "  if f.o ~= '' then " +
  "    local latest = redis.call('get', T .. ':latest:' .. f.o) " +
  "    local holder = redis.call('get', T .. ':order:' .. f.o) " +
  "    if latest and (f.t == '' or tonumber(f.t) < tonumber(latest)) then status = 'stale' " +
  "    elseif holder and holder ~= id then status = 'busy' " +
  "    else redis.call('set', T .. ':order:' .. f.o, id, 'px', lease) end " +
  '  end ' +
  "  if status == 'busy' then " +
  "    redis.call('xack', S, g, id) redis.call('xdel', S, id) " +
  "    redis.call('hset', P, f.k, cjson.encode({ b = f.b, o = f.o, t = f.t, at = f.at, n = tostring(attempt - 1) })) " +
  "    redis.call('zadd', R, at + busy, f.k) " +
  "  elseif status == 'stale' then " +
  "    redis.call('xack', S, g, id) redis.call('xdel', S, id) redis.call('set', T .. ':push:' .. f.k, 'd', 'ex', ttl) " +
  "    out[#out + 1] = { id, 'stale', f.k, f.o, f.t, f.at, tostring(attempt), '' } " +
  "  else out[#out + 1] = { id, 'go', f.k, f.o, f.t, f.at, tostring(attempt), f.b } end " +
  'end ' +
  'return out';

/**
 * KEYS stream; ARGV tag, group, consumer, leaseMs, then id, order pairs. Renews this consumer's
 * hold on each (idle time reset, the order's lock extended); answers the ids no longer its own.
 */
export const RENEW =
  PRELUDE +
  'local S, T, g, c, lease = KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4] ' +
  'local lost = {} ' +
  'for i = 5, #ARGV, 2 do ' +
  '  local id, o = ARGV[i], ARGV[i + 1] ' +
  '  if not mine(S, g, c, id) then lost[#lost + 1] = id ' +
  '  else ' +
  "    redis.call('xclaim', S, g, c, 0, id, 'justid') " +
  "    if o ~= '' then local ok = T .. ':order:' .. o " +
  "      if redis.call('get', ok) == id then redis.call('pexpire', ok, lease) else redis.call('set', ok, id, 'px', lease, 'nx') end end " +
  '  end ' +
  'end ' +
  'return lost';

/**
 * KEYS stream; ARGV tag, group, id, k, order, t, ttl. The callback succeeded: acknowledged, marked
 * processed, the order's newest snapshot moved forward, its lock dropped. 1 when the entry was
 * still pending, 0 when another worker had finished it (or Redis lost it).
 */
export const DONE =
  PRELUDE +
  'local S, T, g, id, k, o, t, ttl = KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7] ' +
  "local acked = redis.pcall('xack', S, g, id) " +
  "if type(acked) ~= 'number' then acked = 0 end " +
  "redis.call('xdel', S, id) " +
  "redis.call('set', T .. ':push:' .. k, 'd', 'ex', ttl) " +
  "if o ~= '' and t ~= '' then " +
  "  local lk = T .. ':latest:' .. o local cur = redis.call('get', lk) " +
  "  if not cur or tonumber(t) > tonumber(cur) then redis.call('set', lk, t, 'ex', ttl) else redis.call('expire', lk, ttl) end " +
  'end ' +
  'unlock(T, o, id) ' +
  'return acked';

/**
 * KEYS stream, retry, parked, dead; ARGV tag, group, consumer, id, delayMs (-1: dead letter),
 * error, attempt. The callback failed: parked for its next attempt, or put aside as a dead letter.
 * Only while the entry is still this consumer's (else another worker runs it now): 1, else 0.
 */
export const FAIL =
  PRELUDE +
  'local S, R, P, D = KEYS[1], KEYS[2], KEYS[3], KEYS[4] ' +
  'local T, g, c, id, delay, err, attempt = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6], ARGV[7] ' +
  'if not mine(S, g, c, id) then return 0 end ' +
  "local e = redis.call('xrange', S, id, id) " +
  "redis.call('xack', S, g, id) redis.call('xdel', S, id) " +
  'if not e[1] then return 0 end ' +
  'local f = fields(e[1][2]) ' +
  'unlock(T, f.o, id) ' +
  'if delay < 0 then ' +
  "  redis.call('xadd', D, '*', 'k', f.k, 'b', f.b, 'o', f.o, 't', f.t, 'at', f.at, 'n', attempt, 'err', err, 'failed', now()) " +
  "  redis.call('set', T .. ':push:' .. f.k, 'x') " +
  'else ' +
  "  redis.call('hset', P, f.k, cjson.encode({ b = f.b, o = f.o, t = f.t, at = f.at, n = attempt })) " +
  "  redis.call('zadd', R, now() + delay, f.k) " +
  'end ' +
  'return 1';

/** KEYS stream; ARGV group, consumer. Removes the consumer from the group when it holds nothing. */
export const LEAVE =
  PRELUDE +
  "local p = redis.pcall('xpending', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2]) " +
  "if type(p) == 'table' and not p.err and #p == 0 then redis.call('xgroup', 'delconsumer', KEYS[1], ARGV[1], ARGV[2]) end " +
  'return 1';

/** KEYS stream, retry, dead; ARGV group. { length, held, retrying, dead, oldest id, first due, now }. */
export const STATS =
  PRELUDE +
  "local held = 0 local p = redis.pcall('xpending', KEYS[1], ARGV[1]) " +
  "if type(p) == 'table' and not p.err then held = p[1] end " +
  "local first = redis.call('xrange', KEYS[1], '-', '+', 'count', 1) " +
  "local due = redis.call('zrange', KEYS[2], 0, 0, 'withscores') " +
  "return { redis.call('xlen', KEYS[1]), held, redis.call('zcard', KEYS[2]), redis.call('xlen', KEYS[3]), " +
  "  first[1] and first[1][1] or '', due[2] or '', tostring(now()) }";

/** KEYS dead; ARGV count. The oldest dead letters: { id, k, o, n, err, failed, at }... */
export const DEAD_LETTERS =
  PRELUDE +
  'local out = {} ' +
  "for _, e in ipairs(redis.call('xrange', KEYS[1], '-', '+', 'count', ARGV[1])) do " +
  '  local f = fields(e[2]) out[#out + 1] = { e[1], f.k, f.o, f.n, f.err, f.failed, f.at } ' +
  'end ' +
  'return out';

/** KEYS stream, dead; ARGV tag, id ('' = the oldest count), count, ttl. Dead letters back into the stream, attempts from 0. */
export const REPLAY =
  PRELUDE +
  'local S, D, T = KEYS[1], KEYS[2], ARGV[1] ' +
  "local list = ARGV[2] ~= '' and redis.call('xrange', D, ARGV[2], ARGV[2]) or redis.call('xrange', D, '-', '+', 'count', ARGV[3]) " +
  'for _, e in ipairs(list) do ' +
  '  local f = fields(e[2]) ' +
  "  redis.call('xadd', S, '*', 'k', f.k, 'b', f.b, 'o', f.o, 't', f.t, 'at', f.at, 'n', '0') " +
  "  redis.call('xdel', D, e[1]) redis.call('set', T .. ':push:' .. f.k, 'q', 'ex', ARGV[4]) " +
  'end ' +
  'return #list';

/** KEYS dead; ARGV tag, id, ttl. Drops a dead letter (a repeat of it is still acknowledged for ttl): 1, or 0 when there is none. */
export const DISCARD =
  PRELUDE +
  "local e = redis.call('xrange', KEYS[1], ARGV[2], ARGV[2]) " +
  'if not e[1] then return 0 end ' +
  "redis.call('xdel', KEYS[1], ARGV[2]) redis.call('set', ARGV[1] .. ':push:' .. fields(e[1][2]).k, 'd', 'ex', ARGV[3]) " +
  'return 1';
