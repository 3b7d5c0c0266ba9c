// The Redis inbox's Lua scripts for the handler and the workers (the operator's: inbox-admin-scripts.ts).
// Every step that reads and writes is one script, so it is atomic; every key shares one hash tag
// (ARGV[1] is that tag), so a Redis Cluster runs them on one master.
//
// Keys under the tag T:
//   T:stream           the Redis Stream of pushes; consumer group "workers". Fields: k (dedupKey),
//                      b (body), o (order_no or ''), t (snapshot time ms or ''), at (received ms),
//                      n (failed attempts before this entry)
//   T:retry, T:parked  pushes waiting for their next attempt: ZSET dedupKey -> due ms, HASH dedupKey -> fields
//   T:age              pushes taken out of the stream's order (retried, parked, replayed) until their
//                      outcome: ZSET dedupKey -> when first stored (Redis ms), for stats().oldestMs
//   T:dead             dead letters: a stream, fields as above plus err, failed and s (first stored, Redis ms) ('' b: Redis lost the body)
//   T:workers          ZSET consumer -> the last time that worker was seen (every few seconds)
//   T:paused           present while inbox.pause() holds every worker
//   T:push:<k>         q queued (or running; q:<order> once parked, so that a push whose fields
//                      Redis evicted can still be named), d processed (EX ttl), x dead letter
//   T:order:<o>        the entry id running a push of order o (PX lease): one at a time per order
//   T:latest:<o>       snapshot time of the newest push of order o processed (EX ttl)
//
// Times come from the Redis server (TIME), so workers with skewed clocks agree.
//
// Redis at maxmemory with noeviction refuses a script's first command that may grow memory (XADD,
// SET, HSET, ZADD...) but lets a script that has already written go on (it cannot stop halfway).
// So each script that moves a push frees first (XACK, XDEL, HDEL, ZREM are writes that are never
// refused) and copies after: a full Redis still lets workers run, finish and free pushes. Only
// APPEND, which adds a push, is refused: the handler answers 503 and the service delivers again.

export const PRELUDE =
  'local function fields(list) local f = {} for j = 1, #list, 2 do f[list[j]] = list[j + 1] end return f end ' +
  "local function now() local t = redis.call('time') return t[1] * 1000 + math.floor(t[2] / 1000) end " +
  "local function unlock(T, o, id) if o ~= '' then local ok = T .. ':order:' .. o if redis.call('get', ok) == id then redis.call('del', ok) end end end " +
  // Reads the keys a script will write beyond its KEYS (a push's mark, its order's lock and newest
  // snapshot) before its first write. While a Cluster migrates the slot, a key already moved fails
  // the script there, with nothing changed: Redis keeps what a script wrote before such an error,
  // and a failure halfway (an entry deleted from the stream, not yet parked) lost the push.
  "local function reach(T, k, o) if o == '' then redis.call('exists', T .. ':push:' .. k) " +
  "  else redis.call('exists', T .. ':push:' .. k, T .. ':order:' .. o, T .. ':latest:' .. o) end end " +
  // The Redis time (ms) a stream entry was added at: its id's first part.
  "local function idms(id) return tonumber(string.match(id, '^(%d+)')) end " +
  "local function mine(S, g, c, id) local p = redis.pcall('xpending', S, g, id, id, 1) return type(p) == 'table' and not p.err and p[1] ~= nil and p[1][2] == c end " +
  // Parks a push for its next attempt at `due`: its fields in P, its schedule in R, its age in A (from
  // `first`, Redis's time when it was stored: `at` is the receiver's clock, which may be off), its
  // order in its mark (the formats of R and P stay those of earlier versions: workers of both run at once in a deploy).
  "local function park(T, R, P, A, k, b, o, t, at, n, due, first) redis.call('hset', P, k, cjson.encode({ b = b, o = o, t = t, at = at, n = n })) " +
  "  redis.call('zadd', R, due, k) redis.call('zadd', A, 'nx', first, k) " +
  "  if o ~= '' then redis.call('set', T .. ':push:' .. k, 'q:' .. o, 'xx', 'keepttl') end end ";

/**
 * KEYS stream, push:<k>; ARGV k, body, order, t, at. 1 stored, 0 already there. Its mark `q` lasts
 * until its outcome (`d` EX ttl, `x`): with an expiry, a push queued past ttlSeconds (workers paused
 * or down) was stored again by its repeat and ran twice.
 */
export const APPEND =
  "if redis.call('exists', KEYS[2]) == 1 then return 0 end " +
  "redis.call('xadd', KEYS[1], '*', 'k', ARGV[1], 'b', ARGV[2], 'o', ARGV[3], 't', ARGV[4], 'at', ARGV[5], 'n', '0') " +
  "redis.call('set', KEYS[2], 'q') return 1";

/** The error of a dead letter whose body Redis lost (an evicting maxmemory-policy). */
export const LOST_BODY = 'Redis lost this push while it waited for its next attempt (evicted: maxmemory-policy is not noeviction); it cannot run again';

/**
 * KEYS stream, retry, parked, age, workers, dead; ARGV tag, group, consumer, count, leaseMs, busyMs,
 * ttl, cursor, beat ('1': mark this worker seen), lost body's error, then the ids the worker runs.
 * Nothing while the inbox is paused (its group made if missing: created 1, or 2 when Redis refused
 * it). Else frees what this consumer holds and does not run, moves due
 * retries into the stream (one whose fields Redis lost becomes a dead letter, answered `lost`),
 * takes pushes whose lease lapsed (XAUTOCLAIM from `cursor`, so that successive reads walk the
 * whole pending list however long), then new ones (XREADGROUP), up to count. Per push of an
 * order: older than the newest processed -> stale (acknowledged, not run); another push of the
 * order running -> parked for busyMs (not an attempt); else the order's lock is taken.
 * Answers { created, next cursor, paused, freed, {id, 'go'|'stale'|'lost', k, o, t, at, attempt, body}... },
 * or { created, cursor, paused, freed, {the freed ids} } when it freed what an earlier read took.
 */
export const READ =
  PRELUDE +
  'local S, R, P, A, W, D = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6] ' +
  'local T, g, c, count, lease, busy, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6]), ARGV[7] ' +
  'local at = now() ' +
  "if redis.call('exists', T .. ':paused') == 1 then " +
  "  if ARGV[9] == '1' then redis.call('zrem', W, c) redis.call('zadd', W, at, c) end " +
  // The group is made while paused too (from the start: what is stored waits for resume), so that
  // a worker started paused knows the inbox's data and sees it lost. 2: no group (Redis refused it).
  "  local made = redis.pcall('xgroup', 'create', S, g, '0', 'mkstream') " +
  "  if type(made) == 'table' and made.err then return { string.find(made.err, 'BUSYGROUP') and 0 or 2, ARGV[8], 1 } end " +
  '  return { 1, ARGV[8], 1 } ' +
  'end ' +
  'local out, freed = { 0, ARGV[8], 0, 0 }, {} ' +
  // What this consumer holds beyond what its worker runs (ARGV[11...]) was taken by a read whose
  // answer never reached the worker (ioredis sends a read again after its connection was cut, by
  // an answer past client-output-buffer-limit, say): freed without counting an attempt, and this
  // read takes nothing (the one sent again would take them again, cut again): out[4] how many, out[5] their ids. Freed
  // is idle for a lease: the next read's XAUTOCLAIM takes it.
  'local keep = {} for i = 11, #ARGV do keep[ARGV[i]] = true end ' +
  "local held = redis.pcall('xpending', S, g, '-', '+', 1000, c) " +
  "if type(held) == 'table' and not held.err then for _, e in ipairs(held) do if not keep[e[1]] and e[3] < tonumber(lease) then out[4] = out[4] + 1 freed[out[4]] = e[1] " +
  "  redis.call('xclaim', S, g, c, 0, e[1], 'idle', lease, 'retrycount', math.max(0, e[4] - 1), 'justid') end end end " +
  'if out[4] > 0 then out[5] = freed return out end ' +
  "for _, k in ipairs(redis.call('zrangebyscore', R, '-inf', at, 'limit', 0, 100)) do " +
  "  local data = redis.call('hget', P, k) " +
  "  redis.call('zrem', R, k) redis.call('hdel', P, k) " +
  "  if data then local f = cjson.decode(data) redis.call('xadd', S, '*', 'k', k, 'b', f.b, 'o', f.o, 't', f.t, 'at', f.at, 'n', f.n) " +
  '  else ' +
  "    local mark = redis.call('get', T .. ':push:' .. k) local o = mark and string.match(mark, '^q:(.*)$') or '' " +
  "    local id = redis.call('xadd', D, '*', 'k', k, 'b', '', 'o', o, 't', '', 'at', '', 'n', '0', 'err', ARGV[10], 'failed', at) " +
  "    redis.call('set', T .. ':push:' .. k, 'x') redis.call('zrem', A, k) " +
  "    out[#out + 1] = { id, 'lost', k, o, '', '', '0', '' } " +
  '  end ' +
  'end ' +
  "local claimed = redis.pcall('xautoclaim', S, g, c, lease, ARGV[8], 'count', count) " +
  'if claimed.err then ' +
  "  if not string.find(claimed.err, 'NOGROUP') then return redis.error_reply(claimed.err) end " +
  "  redis.call('xgroup', 'create', S, g, '0', 'mkstream') out[1] = 1 claimed = { '0-0', {} } " +
  // The stream is gone with what it held: their ages go too (what is parked still waits).
  "  for _, k in ipairs(redis.call('zrange', A, 0, -1)) do if redis.call('hexists', P, k) == 0 then redis.call('zrem', A, k) end end " +
  'end ' +
  'out[2] = claimed[1] ' +
  "if ARGV[9] == '1' then redis.call('zadd', W, at, c) redis.call('zremrangebyscore', W, '-inf', at - 86400000) end " +
  // Parked pushes whose schedule Redis lost (evicted) are due now. Reading P, D and A here also keeps
  // them recently used, so that an LRU or LFU policy evicts other keys first.
  "if redis.call('hlen', P) > redis.call('zcard', R) then " +
  "  for _, k in ipairs(redis.call('hkeys', P)) do if not redis.call('zscore', R, k) then redis.call('zadd', R, at, k) end end " +
  'end ' +
  "redis.call('xlen', D) redis.call('zcard', A) " +
  'local entries = {} ' +
  'for _, e in ipairs(claimed[2]) do if type(e) == "table" and type(e[2]) == "table" then entries[#entries + 1] = e end end ' +
  'local reclaimed = #entries ' +
  'if #entries < count then ' +
  "  local r = redis.call('xreadgroup', 'group', g, c, 'count', count - #entries, 'streams', S, '>') " +
  '  if r then for _, e in ipairs(r[1][2]) do entries[#entries + 1] = e end end ' +
  'end ' +
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
  '    park(T, R, P, A, f.k, f.b, f.o, f.t, f.at, tostring(attempt - 1), at + busy, idms(id)) ' +
  "  elseif status == 'stale' then " +
  "    redis.call('xack', S, g, id) redis.call('xdel', S, id) redis.call('set', T .. ':push:' .. f.k, 'd', 'ex', ttl) redis.call('zrem', A, f.k) " +
  "    out[#out + 1] = { id, 'stale', f.k, f.o, f.t, f.at, tostring(attempt), '' } " +
  "  else out[#out + 1] = { id, 'go', f.k, f.o, f.t, f.at, tostring(attempt), f.b } end " +
  'end ' +
  'return out';

/** KEYS workers; ARGV consumer. A paused worker is still seen (stats().workers). */
export const HEARTBEAT = PRELUDE + "redis.call('zrem', KEYS[1], ARGV[1]) redis.call('zadd', KEYS[1], now(), ARGV[1]) return 1";

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
 * KEYS stream, age; ARGV tag, group, id, k, order, t, ttl. The callback succeeded: acknowledged,
 * marked processed, the order's newest snapshot moved forward, its lock dropped. 1 when the entry
 * was still pending, 0 when another worker had finished it (or Redis lost it).
 */
export const DONE =
  PRELUDE +
  'local S, T, g, id, k, o, t, ttl = KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7] ' +
  'reach(T, k, o) ' +
  "local acked = redis.pcall('xack', S, g, id) " +
  "if type(acked) ~= 'number' then acked = 0 end " +
  "redis.call('xdel', S, id) redis.call('zrem', KEYS[2], k) " +
  "redis.call('set', T .. ':push:' .. k, 'd', 'ex', ttl) " +
  "if o ~= '' and t ~= '' then " +
  "  local lk = T .. ':latest:' .. o local cur = redis.call('get', lk) " +
  "  if not cur or tonumber(t) > tonumber(cur) then redis.call('set', lk, t, 'ex', ttl) else redis.call('expire', lk, ttl) end " +
  'end ' +
  'unlock(T, o, id) ' +
  'return acked';

/**
 * KEYS stream, retry, parked, dead, age; ARGV tag, group, consumer, id, delayMs (-1: dead letter),
 * error, attempt. The callback failed: parked for its next attempt, or put aside as a dead letter.
 * Only while the entry is still this consumer's (else another worker runs it now): { 1, the dead
 * letter's id or '' }, else { 0 }.
 */
export const FAIL =
  PRELUDE +
  'local S, R, P, D, A = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5] ' +
  'local T, g, c, id, delay, err, attempt = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6], ARGV[7] ' +
  'if not mine(S, g, c, id) then return { 0 } end ' +
  "local e = redis.call('xrange', S, id, id) " +
  'local f = e[1] and fields(e[1][2]) ' +
  'if f then reach(T, f.k, f.o) end ' +
  "redis.call('xack', S, g, id) redis.call('xdel', S, id) " +
  'if not f then return { 0 } end ' +
  'unlock(T, f.o, id) ' +
  'if delay < 0 then ' +
  // s: when it was first stored, in Redis's time (what replay() ages it from).
  "  local dead = redis.call('xadd', D, '*', 'k', f.k, 'b', f.b, 'o', f.o, 't', f.t, 'at', f.at, 'n', attempt, 'err', err, 'failed', now(), 's', redis.call('zscore', A, f.k) or idms(id)) " +
  "  redis.call('set', T .. ':push:' .. f.k, 'x') redis.call('zrem', A, f.k) " +
  '  return { 1, dead } ' +
  'end ' +
  'park(T, R, P, A, f.k, f.b, f.o, f.t, f.at, attempt, now() + delay, idms(id)) ' +
  "return { 1, '' }";

/**
 * KEYS stream, workers; ARGV group, consumer, leaseMs, leaving ('1' when the worker closes), then
 * the ids to keep. Makes every other push this consumer holds (taken by a read whose answer never
 * came: Redis stalled past timeoutMs, the connection dropped) free for any worker's next read,
 * without counting an attempt. Kept: those running, and those whose run ended but whose outcome
 * could not be stored (they ran: they wait for their lease, and count). A worker that closes is no
 * longer counted in stats().workers, and leaves the group when it holds nothing. The ids freed.
 */
export const RELEASE =
  'local S, g, c, lease = KEYS[1], ARGV[1], ARGV[2], ARGV[3] ' +
  'local keep = {} for i = 5, #ARGV do keep[ARGV[i]] = true end ' +
  "if ARGV[4] == '1' then redis.call('zrem', KEYS[2], c) end " +
  "local p = redis.pcall('xpending', S, g, '-', '+', 1000, c) " +
  "if type(p) ~= 'table' or p.err then return {} end " +
  'local freed = {} ' +
  // Only what a read took lately (idle below a lease): one already free for XAUTOCLAIM would lose a delivery from its count.
  'for _, e in ipairs(p) do if not keep[e[1]] and e[3] < tonumber(lease) then ' +
  "  redis.call('xclaim', S, g, c, 0, e[1], 'idle', lease, 'retrycount', math.max(0, e[4] - 1), 'justid') freed[#freed + 1] = e[1] end end " +
  "if ARGV[4] == '1' and #p == 0 then redis.call('xgroup', 'delconsumer', S, g, c) end " +
  'return freed';
