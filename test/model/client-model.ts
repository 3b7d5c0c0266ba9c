/**
 * A model-based test of the client (issue #11): fast-check draws random interleavings of
 * requests (GET and POST with distinct bodies), answers (200, fresh and stale 401s,
 * transient 503s, dropped connections), provider calls that resolve late or fail,
 * clearToken() with a user switch, aborts at random moments and time passing across expiry,
 * against a real node:http server whose every answer the test chooses. A small reference
 * model (epochs, tokens, requests) judges each run; the invariants are the API.md promises.
 *
 * Issue #20 adds: a tokenStore whose every get/set/remove waits until the test settles it
 * (an async store, slow in any order), keyed by the signed-in user, holding a previous
 * launch's token at the start; a user switch without clearToken() (the key changes); a device
 * clock wrong by hours; the server's clock in every answer's Date header; and a backend cache
 * whose plain calls hand out tokens of any age. A switch ends a session like a logout does.
 *
 * A run replays exactly from its seed (issue #31): after each command the world waits for the
 * client's reaction (its sends reaching the server, its reading of an answer, its announced
 * retries), never for wall time, and commands pick held requests by request id, not by the
 * order they arrived in. A failure throws a report (checkModel): the seed, the line that
 * replays the shrunk sequence, the sequence, and a trace of what the client did in it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as fc from 'fast-check';
import type { Client } from '../../src/core/client.js';
import type { CoreClientOptions, SignalLike, TokenStore } from '../../src/core/types.js';
import { createCancelToken } from '../../src/core/cancel.js';
import { isChannelError } from '../../src/errors/index.js';
import { makeJwt } from '../helpers/fake-service.js';
import { collectStrings } from '../helpers/scan.js';
import { sendJson, startServer, type TestServer } from '../helpers/server.js';

/** Creates the client under test; `record` must be called with each attempt's headers as it is handed to the network. */
export type ModelClientFactory = (options: CoreClientOptions, record: (headers: Record<string, string>) => void) => Client;

interface Held {
  id: number;
  /** Arrival order, for attempts of one request. */
  seq: number;
  token: string;
  res: ServerResponse;
  req: IncomingMessage;
}
interface ProviderCall {
  forced: boolean;
  epoch: number;
  heldVersion: number;
  resolve(token: string): void;
  reject(error: Error): void;
}
interface RequestState {
  id: number;
  method: 'GET' | 'POST';
  epoch: number;
  sends: number;
  /** Sends handed to the network that have not reached the server yet. */
  unarrived: number;
  /** Sends that followed a 401 answer (the replay); at most one. */
  replays: number;
  /** A 401 was answered and the next send, if any, is its replay. */
  after401: boolean;
  got401: boolean;
  cancelled: boolean;
  /** An answer was given and the client has not reacted yet (response event, retry or settle). */
  awaitingReaction: boolean;
  /** A transient retry was announced and not made yet (its delay runs). */
  awaitingRetry: boolean;
  outcome?: { ok: boolean; error?: unknown };
  /** Aborts the request's signal; undefined for a request made without one. */
  abort?: () => void;
}

export interface World {
  server: TestServer;
  client: Client;
  held: Held[];
  calls: ProviderCall[];
  requests: Map<number, RequestState>;
  /** Issued tokens and the epoch (session) they belong to; the user each was issued for. */
  tokens: Map<string, number>;
  users: Map<string, number>;
  epoch: number;
  user: number;
  /** The server's clock; the device's is `clock + skew`. */
  clock: number;
  skew: number;
  /** The epoch the last clearToken() started (a logout, not a switch). */
  clearedAt: number;
  store: ModelStore;
  /** The client has read an answer, and with it the server's clock. */
  dateSeen: boolean;
  /** Refreshes ahead of expiry ('proactive', 'expired') since time last passed or the session changed. */
  aheadSinceTick: number;
  nextId: number;
  /** Attempts that reached the server. */
  arrived: number;
  /** Names of issued tokens in the trace: T1, T2, ... */
  names: Map<string, string>;
  /** What happened, a line per step (commands, sends, arrivals, events, provider and store calls): printed with a failure. */
  trace: string[];
  /** Set when the client did not react to a command in time: what it was waiting for. */
  stuck?: string;
  /** Latest token version from the `token` event, and which version each installed token replaced. */
  version: number;
  installs: Array<{ reason: string; replaced: number }>;
  payloads: unknown[];
  violations: string[];
  /** What the run exercised, summed over runs by checkModel (a model test that explores nothing proves nothing). */
  seen: Coverage;
}

/** The async tokenStore: every call waits for the test to settle it. */
interface ModelStore {
  data: { token: string; receivedAt: number; expiresAt: number; key?: string; service?: string } | undefined;
  pending: Array<() => void>;
}

export interface Coverage {
  sends: number;
  switches: number;
  restored: number;
  cachedTokens: number;
  storeWrites: number;
  fresh401: number;
  stale401: number;
  replays: number;
  transientRetries: number;
  providerFailures: number;
  clearsWithOpenRequests: number;
  abortsOfOpenRequests: number;
  refreshesAhead: number;
  resolved: number;
  rejected: number;
}

export const noCoverage = (): Coverage => ({
  sends: 0,
  switches: 0,
  restored: 0,
  cachedTokens: 0,
  storeWrites: 0,
  fresh401: 0,
  stale401: 0,
  replays: 0,
  transientRetries: 0,
  providerFailures: 0,
  clearsWithOpenRequests: 0,
  abortsOfOpenRequests: 0,
  refreshesAhead: 0,
  resolved: 0,
  rejected: 0,
});

/** The reference model: what the commands may act on. It mirrors the real world's queues. */
export interface Model {
  world: World;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/**
 * How long the client may take to react to one command (a send to reach the local server, an
 * answer to be read, a 15 ms retry delay): milliseconds when idle, a few seconds on a loaded
 * machine. Past it the run fails as a hang, with the sequence that caused it.
 */
const REACTION_MS = 10_000;

/**
 * What the world still waits for: a send of an open request that has not reached the server,
 * an answer the client has not read, an announced transient retry not sent yet. A request that
 * has settled is not waited for: an attempt aborted before it connected never arrives.
 */
function waitingFor(world: World): string | undefined {
  for (const r of world.requests.values()) {
    if (r.outcome) continue;
    if (r.unarrived) return `request ${r.id}'s send to reach the server`;
    if (r.awaitingReaction) return `the client to read the answer to request ${r.id}`;
    if (r.awaitingRetry) return `request ${r.id}'s announced retry to be made`;
  }
  return undefined;
}

/**
 * Waits until the world is at rest: nothing is waited for (above), and three turns of the event
 * loop passed without anything new (the client's reactions that are not I/O: provider and
 * store calls, settled promises). Waits for events, not for time: REACTION_MS only bounds a
 * hang, which fails the run.
 */
async function quiesce(world: World): Promise<void> {
  if (world.stuck) return;
  const started = Date.now();
  let quiet = 0;
  while (quiet < 3) {
    await tick();
    const what = waitingFor(world);
    if (!what) {
      quiet++;
      continue;
    }
    quiet = 0;
    if (Date.now() - started > REACTION_MS) {
      world.stuck = what;
      throw new Error(`the client did not react within ${REACTION_MS} ms: still waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** The claims of a token this model issued. */
const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { iat: number; exp: number };

export async function createWorld(factory: ModelClientFactory, skew = 0): Promise<World> {
  const world = {} as World;
  Object.assign(world, {
    held: [],
    calls: [],
    requests: new Map(),
    tokens: new Map(),
    users: new Map(),
    epoch: 0,
    user: 0,
    clock: Date.UTC(2026, 0, 1),
    skew,
    clearedAt: 0,
    dateSeen: false,
    aheadSinceTick: 0,
    nextId: 0,
    arrived: 0,
    names: new Map(),
    trace: [],
    version: 0,
    installs: [],
    payloads: [],
    violations: [],
    seen: noCoverage(),
  });
  // A previous launch of user 0 left a token 100 s old in the store: the session goes on.
  const previous = issue(world, 100);
  world.store = { data: { token: previous, receivedAt: world.clock + skew - 100_000, expiresAt: world.clock + skew + 800_000, key: 'user-0' }, pending: [] };
  world.server = await startServer((req, res) => {
    const id = Number(req.headers['x-req']);
    const token = String(req.headers.authorization).replace(/^Bearer /, '');
    const request = world.requests.get(id);
    if (request && request.unarrived) request.unarrived--;
    world.trace.push(`  request ${id} reaches the server`);
    world.held.push({ id, seq: ++world.arrived, token, res, req });
  });
  const record = (headers: Record<string, string>) => {
    const id = Number(headers['x-req']);
    const token = String(headers.authorization).replace(/^Bearer /, '');
    const request = world.requests.get(id);
    if (!request) return void world.violations.push(`a send for unknown request ${id}`);
    world.seen.sends++;
    request.sends++;
    request.unarrived++;
    world.trace.push(`  request ${id} sent (attempt ${request.sends}) with ${nameOf(world, token)}`);
    if (request.after401) request.replays++;
    request.after401 = false;
    const tokenEpoch = world.tokens.get(token);
    // A first attempt never carries a token the server's clock says has ended, once the client has read that clock.
    if (tokenEpoch !== undefined && request.sends === 1 && world.dateSeen && claims(token).exp * 1000 <= world.clock) {
      world.violations.push(`request ${id} was first sent with a token that had expired by the server's clock`);
    }
    if (tokenEpoch === undefined) world.violations.push(`request ${id} sent a token no provider issued`);
    else if (tokenEpoch !== world.epoch) world.violations.push(`request ${id} sent a token of epoch ${tokenEpoch} in epoch ${world.epoch} (after clearToken)`);
    if (request.epoch !== world.epoch) world.violations.push(`request ${id} of epoch ${request.epoch} was sent again in epoch ${world.epoch}`);
    if (request.method === 'POST' && request.sends > 1 + (request.got401 ? 1 : 0)) world.violations.push(`POST ${id} was retried after a transient failure`);
    if (request.replays > 1) world.violations.push(`request ${id} was replayed more than once after a 401`);
  };
  // Every call waits until SettleStore (or the end of the run) lets it through, in any order.
  const later = <T>(what: string, fn: () => T) =>
    new Promise<T>((resolve) => {
      world.trace.push(`  store call #${world.store.pending.length}: ${what}`);
      world.store.pending.push(() => resolve(fn()));
    });
  // The previous launch's record was saved for this service (a record is restored only for its baseUrl).
  if (world.store.data) world.store.data.service = world.server.url;
  const tokenStore: TokenStore = {
    key: () => 'user-' + world.user,
    get: () => later('get', () => world.store.data),
    set: (value) => {
      world.seen.storeWrites++;
      const epoch = world.tokens.get(value.token) ?? -1;
      if (epoch < world.clearedAt) world.violations.push('a token obtained before clearToken() was written to the store after it');
      if (value.key !== 'user-' + world.users.get(value.token))
        world.violations.push(`user-${world.users.get(value.token)}'s token was stored under ${value.key}`);
      return later(`set ${nameOf(world, value.token)} under ${String(value.key)}`, () => void (world.store.data = value));
    },
    remove: () => later('remove', () => void (world.store.data = undefined)),
  };
  world.client = factory(
    {
      baseUrl: world.server.url,
      tokenProvider: ({ forceRefresh }) =>
        new Promise<string>((resolve, reject) => {
          world.trace.push(`  provider call #${world.calls.length} (${forceRefresh ? 'forced' : 'plain'})`);
          world.calls.push({ forced: forceRefresh, epoch: world.epoch, heldVersion: world.version, resolve, reject });
        }),
      now: () => world.clock + world.skew,
      tokenStore,
      retry: { limit: 2, delay: () => 15 },
      timeout: 30_000,
      tokenTimeout: 60_000,
    },
    record,
  );
  world.client.on('*', (type, payload) => {
    world.payloads.push({ type, payload });
    world.trace.push(`  event ${type} ${describeEvent(payload)}`);
    const request = world.requests.get((payload as { requestId?: number }).requestId ?? -1);
    if (request && (type === 'response' || type === 'retry' || type === 'error')) request.awaitingReaction = false;
    if (type === 'response') world.dateSeen = true;
    if (request && type === 'retry' && (payload as { reason: string }).reason !== 'unauthorized') request.awaitingRetry = true;
    // The retry is made (handed to the transport): it may wait there for a host slot, which
    // only a later command (an answer) frees, so its send is not waited for.
    if (request && type === 'request') request.awaitingRetry = false;
    if (type === 'retry') world.seen[(payload as { reason: string }).reason === 'unauthorized' ? 'replays' : 'transientRetries']++;
    if (type === 'unauthorized') world.seen[(payload as { tokenVersion: number }).tokenVersion < world.version ? 'stale401' : 'fresh401']++;
    if (type === 'token' && ['proactive', 'expired'].includes((payload as { reason: string }).reason)) world.seen.refreshesAhead++;
    if (type === 'token') {
      const e = payload as { reason: string; version: number };
      if (e.reason === 'stored') world.seen.restored++;
      // Refreshes ahead need time to pass. One, and one more when the provider call that
      // brought the token spanned time passing (the token is timed from when it was asked):
      // a third is a refresh loop.
      if ((e.reason === 'proactive' || e.reason === 'expired') && ++world.aheadSinceTick > 2)
        world.violations.push('refreshed ahead again without time passing (a refresh loop)');
      world.installs.push({ reason: e.reason, replaced: world.version });
      world.version = e.version;
    }
  });
  return world;
}

/** Ends a run: answers everything until every request has settled, then checks the end state. */
export async function finish(world: World): Promise<void> {
  world.trace.push('end: every store call completes, every provider call resolves, every request gets 200');
  try {
    for (let round = 0; round < 50 && ([...world.requests.values()].some((r) => !r.outcome) || world.store.pending.length); round++) {
      for (const op of world.store.pending.splice(0)) op();
      for (const call of world.calls.splice(0)) call.resolve(issue(world));
      for (const held of world.held.splice(0)) reply(world, held, 200, { code: 0, data: { id: held.id } });
      await quiesce(world);
    }
  } finally {
    await world.server.close();
  }
  // At rest the store holds nothing from before the last logout, and only a token of the user it names.
  const kept = world.store.data;
  if (kept && (world.tokens.get(kept.token) ?? 0) < world.clearedAt) world.violations.push('the store still holds a token obtained before clearToken()');
  if (kept && kept.key !== 'user-' + world.users.get(kept.token)) world.violations.push("the store holds a token under another user's key");
  for (const r of world.requests.values()) {
    if (!r.outcome) world.violations.push(`request ${r.id} never settled`);
    else if (r.cancelled && r.outcome.ok) world.violations.push(`request ${r.id} was cancelled but resolved`);
    else if (!r.outcome.ok && !isChannelError(r.outcome.error)) world.violations.push(`request ${r.id} failed with a non-ChannelError`);
  }
  // One successful forced provider call per rejected token version.
  const perVersion = new Map<number, number>();
  for (const install of world.installs.filter((i) => i.reason === 'unauthorized'))
    perVersion.set(install.replaced, (perVersion.get(install.replaced) ?? 0) + 1);
  for (const [version, count] of perVersion) if (count > 1) world.violations.push(`${count} forced refreshes replaced token version ${version}`);
  const strings = collectStrings([world.payloads, [...world.requests.values()].map((r) => r.outcome?.error)]);
  for (const token of world.tokens.keys()) if (strings.some((s) => s.includes(token))) world.violations.push('a token appears in an event payload or an error');
}

/** A token of the current user issued `age` seconds ago by the server's clock (a backend cache's). */
function issue(world: World, age = 0): string {
  const iat = Math.floor(world.clock / 1000) - age;
  const token = makeJwt({ sub: 'user-' + world.user, iat, exp: iat + 900, n: world.tokens.size });
  world.tokens.set(token, world.epoch);
  world.users.set(token, world.user);
  world.names.set(token, `T${world.names.size + 1}`);
  world.trace.push(`  issued ${nameOf(world, token)} (user-${world.user}${age ? `, ${age} s old` : ''})`);
  return token;
}

/** A token's name in the trace (never the token: a failure's output must not carry one either). */
const nameOf = (world: World, token: string) => world.names.get(token) ?? 'a token no provider issued';

/** An event payload for the trace: the request, and the fields that say what happened. */
function describeEvent(payload: unknown): string {
  const p = (payload ?? {}) as Record<string, unknown>;
  const parts: string[] = [];
  if (p.requestId !== undefined) parts.push(`request ${String(p.requestId)}`);
  for (const field of ['reason', 'status', 'version', 'tokenVersion', 'attempt']) if (p[field] !== undefined) parts.push(`${field} ${String(p[field])}`);
  if (p.error && typeof p.error === 'object') parts.push(`error ${String((p.error as { code?: unknown }).code)}`);
  return parts.join(', ');
}

/** Answers a held request with the server's clock in its Date header. */
function reply(world: World, held: Held, status: number, body: unknown): void {
  held.res.setHeader('date', new Date(world.clock).toUTCString());
  sendJson(held.res, status, body);
}

type Cmd = fc.AsyncCommand<Model, World, false>;
const nth = <T>(list: T[], k: number): T => list[k % list.length];

/**
 * Requests held at the server whose request is still open, by request id: the order attempts
 * arrive in (several sent at once) varies from run to run, and a settled request's attempt may
 * arrive or not; neither may change which request a command picks, or a seed would not replay.
 */
const open = (world: World) => world.held.filter((held) => !world.requests.get(held.id)?.outcome).toSorted((a, b) => a.id - b.id || a.seq - b.seq);

class StartRequest implements Cmd {
  constructor(
    readonly method: 'GET' | 'POST',
    readonly signalKind: 'none' | 'controller' | 'cancel-token',
  ) {}
  check = () => true;
  async run(_m: Model, world: World) {
    const id = ++world.nextId;
    let signal: SignalLike | undefined;
    let abort: (() => void) | undefined;
    if (this.signalKind === 'controller') {
      const c = new AbortController();
      signal = c.signal;
      abort = () => c.abort();
    } else if (this.signalKind === 'cancel-token') {
      const c = createCancelToken();
      signal = c.signal;
      abort = () => c.cancel();
    }
    const state: RequestState = {
      id,
      method: this.method,
      epoch: world.epoch,
      sends: 0,
      unarrived: 0,
      replays: 0,
      after401: false,
      got401: false,
      cancelled: false,
      awaitingReaction: false,
      awaitingRetry: false,
      abort,
    };
    world.requests.set(id, state);
    world.trace.push(`${this.toString()}: request ${id}`);
    const options = { headers: { 'x-req': String(id) }, ...(signal ? { signal } : {}) };
    const promise =
      this.method === 'GET' ? world.client.get('/r/' + id, options) : world.client.post('/r/' + id, { ...options, json: { id, body: 'payload-' + id } });
    promise.then(
      () => {
        state.outcome = { ok: true };
        world.seen.resolved++;
        world.trace.push(`  request ${id} resolves`);
      },
      (error: unknown) => {
        state.outcome = { ok: false, error };
        world.seen.rejected++;
        world.trace.push(`  request ${id} rejects: ${String((error as { code?: unknown })?.code)}`);
      },
    );
    await quiesce(world);
  }
  toString = () => `start ${this.method} (${this.signalKind})`;
}

class Answer implements Cmd {
  constructor(
    readonly k: number,
    readonly kind: 'ok' | '401' | '503' | 'drop',
  ) {}
  check = (m: Model) => open(m.world).length > 0;
  async run(_m: Model, world: World) {
    const held = nth(open(world), this.k);
    world.held.splice(world.held.indexOf(held), 1);
    world.trace.push(`${this.toString()}: request ${held.id}, sent with ${nameOf(world, held.token)}`);
    const request = world.requests.get(held.id);
    if (request && !request.outcome) {
      request.awaitingReaction = true;
      if (this.kind === '401') request.got401 = request.after401 = true;
    }
    if (this.kind === 'ok') reply(world, held, 200, { code: 0, data: { id: held.id } });
    else if (this.kind === '401') reply(world, held, 401, { code: 401, message: 'token rejected' });
    else if (this.kind === '503') reply(world, held, 503, { code: 503, message: 'busy' });
    else held.req.socket.destroy();
    await quiesce(world);
  }
  toString = () => `answer #${this.k} ${this.kind}`;
}

/**
 * Answers 401 to a request that went out with a token older than the newest one issued: the
 * interleaving behind rule 4 (a 401 on a replaced token retries with the new one, no provider
 * call). Plain `Answer` reaches it only a few times in 150 runs; this picks it on purpose.
 */
class AnswerStale401 implements Cmd {
  constructor(readonly k: number) {}
  check = (m: Model) => stale(m.world).length > 0;
  async run(m: Model, world: World) {
    const candidates = stale(world);
    if (!candidates.length) return; // the state moved on since check() (a reply in between)
    await new Answer(open(world).indexOf(nth(candidates, this.k)), '401').run(m, world);
  }
  toString = () => `answer a request sent with an older token (#${this.k}) 401`;
}
const stale = (world: World) => {
  const newest = [...world.tokens.keys()].pop();
  return open(world).filter((held) => held.token !== newest);
};

class Provide implements Cmd {
  /** `age`: how old the token a plain call gets from the backend cache is (a forced call's is new). */
  constructor(
    readonly k: number,
    readonly ok: boolean,
    readonly age = 0,
  ) {}
  check = (m: Model) => m.world.calls.length > 0;
  async run(_m: Model, world: World) {
    const call = nth(world.calls, this.k);
    world.trace.push(`${this.toString()}: call #${world.calls.indexOf(call)} (${call.forced ? 'forced' : 'plain'})`);
    world.calls.splice(world.calls.indexOf(call), 1);
    // A call of an earlier session gets its own session's user, as a backend session would give.
    if (this.ok && call.epoch !== world.epoch) {
      const gone = makeJwt({ sub: 'gone', iat: 1, exp: 2 });
      world.names.set(gone, "an earlier session's token");
      call.resolve(gone);
    } else if (this.ok) {
      if (!call.forced && this.age) world.seen.cachedTokens++;
      call.resolve(issue(world, call.forced ? 0 : this.age));
    } else {
      world.seen.providerFailures++;
      call.reject(new Error('partner backend down'));
    }
    await quiesce(world);
  }
  toString = () => `provider #${this.k} ${this.ok ? 'resolves' + (this.age ? ` (a plain call gets a token ${this.age} s old)` : '') : 'fails'}`;
}

class ClearAndSwitchUser implements Cmd {
  check = () => true;
  async run(_m: Model, world: World) {
    world.trace.push(this.toString());
    const unsettled = [...world.requests.values()].filter((r) => !r.outcome);
    for (const r of unsettled) r.cancelled = true;
    if (unsettled.length) world.seen.clearsWithOpenRequests++;
    world.client.clearToken();
    world.epoch++;
    world.clearedAt = world.epoch;
    world.user++;
    world.aheadSinceTick = 0;
    await quiesce(world);
  }
  toString = () => 'clearToken() and sign in as the next user';
}

/** The next user signs in without any clearToken(): only tokenStore's key() says so. */
class SwitchUser implements Cmd {
  check = () => true;
  async run(_m: Model, world: World) {
    world.trace.push(this.toString());
    // Requests under way end when the client next looks at the key (before any send).
    for (const r of world.requests.values()) if (!r.outcome) r.cancelled = true;
    world.seen.switches++;
    world.epoch++;
    world.user++;
    world.aheadSinceTick = 0;
    await quiesce(world);
  }
  toString = () => 'sign in as the next user without clearToken()';
}

/** Lets the k-th waiting store call (get, set or remove) through. */
class SettleStore implements Cmd {
  constructor(readonly k: number) {}
  check = (m: Model) => m.world.store.pending.length > 0;
  async run(_m: Model, world: World) {
    const op = nth(world.store.pending, this.k);
    world.trace.push(`${this.toString()}: call #${world.store.pending.indexOf(op)}`);
    world.store.pending.splice(world.store.pending.indexOf(op), 1);
    op();
    await quiesce(world);
  }
  toString = () => `store call #${this.k} completes`;
}

class Abort implements Cmd {
  constructor(readonly k: number) {}
  check = (m: Model) => [...m.world.requests.values()].some((r) => !r.outcome);
  async run(_m: Model, world: World) {
    const unsettled = [...world.requests.values()].filter((r) => !r.outcome);
    const r = nth(unsettled, this.k);
    world.trace.push(`${this.toString()}: request ${r.id}${r.abort ? '' : ' (made without a signal: nothing happens)'}`);
    // A request made without a signal cannot be aborted: the command is then a no-op.
    if (r.abort) {
      r.cancelled = true;
      world.seen.abortsOfOpenRequests++;
      r.abort();
    }
    await quiesce(world);
  }
  toString = () => `abort open request #${this.k}`;
}

class Advance implements Cmd {
  constructor(readonly seconds: number) {}
  check = () => true;
  async run(_m: Model, world: World) {
    world.trace.push(this.toString());
    world.clock += this.seconds * 1000;
    world.aheadSinceTick = 0;
    await quiesce(world);
  }
  toString = () => `time passes ${this.seconds} s`;
}

const start = fc
  .tuple(fc.constantFrom('GET' as const, 'POST' as const), fc.constantFrom('none' as const, 'controller' as const, 'cancel-token' as const))
  .map(([m, s]) => new StartRequest(m, s));
const answer = fc
  .tuple(fc.nat(20), fc.constantFrom('ok' as const, 'ok' as const, '401' as const, '401' as const, '503' as const, 'drop' as const))
  .map(([k, kind]) => new Answer(k, kind));
const provide = fc.tuple(fc.nat(20), fc.nat(5), fc.constantFrom(0, 0, 300, 840, 890, 950)).map(([k, n, age]) => new Provide(k, n !== 0, age));

/** Weighted by repetition (fc.commands draws uniformly from the list): mostly traffic, now and then a logout. */
export const commandArbitraries = [
  start,
  start,
  start,
  answer,
  answer,
  answer,
  answer,
  provide,
  provide,
  provide,
  fc.nat(20).map((k) => new AnswerStale401(k)),
  fc.constant(new ClearAndSwitchUser()),
  fc.constant(new SwitchUser()),
  fc.nat(20).map((k) => new SettleStore(k)),
  fc.nat(20).map((k) => new SettleStore(k)),
  fc.nat(20).map((k) => new Abort(k)),
  fc.integer({ min: 30, max: 900 }).map((s) => new Advance(s)),
];

/** A batch of sequences: its seed and size; to replay one counterexample, fast-check's path to it and which of its commands ran (`replayPath`). */
export interface Batch {
  seed: number;
  runs: number;
  path?: string;
  replayPath?: string;
}

/** The device clock: right, or wrong by hours either way. */
const skews = [0, 3 * 3_600_000, -3 * 3_600_000, 12 * 3_600_000, -12 * 3_600_000];

/**
 * Runs a batch of random sequences against `factory` (or replays one counterexample: `path`);
 * resolves to what the runs exercised. A failure (a violated invariant, a hang, an exception)
 * throws the report (formatFailure): the seed, the replay line, the shrunk sequence and what
 * happened in it.
 */
export async function checkModel(factory: ModelClientFactory, batch: Batch, replay: (batch: Batch) => string): Promise<Coverage> {
  const total = noCoverage();
  // The world of the last failing run: while fast-check shrinks, that is the counterexample's.
  let failing: World | undefined;
  const details = await fc.check(
    fc.asyncProperty(
      fc.constantFrom(...skews),
      fc.commands(commandArbitraries, { maxCommands: 60, size: 'max', ...(batch.replayPath ? { replayPath: batch.replayPath } : {}) }),
      async (skew, cmds) => {
        const world = await createWorld(factory, skew);
        const problems: string[] = [];
        const fault = (error: unknown) => void problems.push(error instanceof Error ? error.message : String(error));
        await fc.asyncModelRun(() => ({ model: { world }, real: world }), cmds).catch(fault);
        await finish(world).catch(fault);
        for (const key of Object.keys(total) as Array<keyof Coverage>) total[key] += world.seen[key];
        if (world.violations.length) problems.push('violated: ' + [...new Set(world.violations)].join('; '));
        if (problems.length) {
          failing = world;
          throw new Error(problems.join('; '));
        }
      },
    ),
    { numRuns: batch.runs, seed: batch.seed, ...(batch.path ? { path: batch.path, endOnFailure: true } : {}) },
  );
  if (details.failed) throw new Error(formatFailure(details, batch, failing, replay));
  return total;
}

/** The report of a failed batch: what to paste back (MODEL_SEED, MODEL_PATH, MODEL_REPLAY), and what to read. */
function formatFailure(details: fc.RunDetails<[number, Iterable<Cmd>]>, batch: Batch, world: World | undefined, replay: (batch: Batch) => string): string {
  const [skew, cmds] = details.counterexample ?? [0, []];
  const replayPath = /replayPath="([^"]*)"/.exec(String(cmds))?.[1] ?? '';
  const ran = [...cmds].filter((cmd) => (cmd as { hasRan?: boolean }).hasRan).map((cmd, i) => `  ${i + 1}. ${cmd.toString()}`);
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  const trace = world ? world.trace : [];
  const shown = trace.length > 300 ? ['  … ' + (trace.length - 300) + ' earlier lines', ...trace.slice(-300)] : trace;
  return [
    `model test failed: ${error}`,
    batch.path
      ? `seed ${details.seed}, path ${details.counterexamplePath}: the shrunk sequence replayed.`
      : `seed ${details.seed}, path ${details.counterexamplePath}: failed at run ${details.numRuns} of ${batch.runs}, shrunk ${details.numShrinks} times.`,
    'Run the shrunk sequence alone:',
    '  ' + replay({ seed: details.seed, runs: 1, path: details.counterexamplePath ?? '', replayPath }),
    'Run the batch again (it shrinks again):',
    '  ' + replay({ seed: details.seed, runs: batch.runs }),
    `The shrunk sequence (device clock ${skew / 3_600_000} h off the server's):`,
    ...ran,
    'What happened in it (the shrunk run):',
    ...shown.map((line) => '  ' + line),
  ].join('\n');
}
