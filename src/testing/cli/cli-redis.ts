// Your project's Redis client, connected: `channel-sandbox inbox` talks to your Redis
// through the ioredis or node-redis your project has installed, resolved from the current
// directory: the package bundles none.
import { createRequire } from 'node:module';
import { connect as connectTcp } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RedisClient } from '../../server/redis-client.js';
import { bounded } from '../../shared/bounded.js';
import { CliError } from './cli-client.js';
import { CREDENTIALS_FIX, CREDENTIALS_REFUSED, PLAIN_NOT_TLS } from '../check/doctor-redis.js';

export interface Connected {
  client: RedisClient;
  /** One command as an array (`['INFO', 'memory']`), the reply as the client gives it. */
  send(args: string[]): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * What every node of a Cluster is connected with, from the first URL: its user and password (in
 * the user info, or `?username=`/`?password=` as ioredis takes them) and TLS (`rediss://`). A
 * Cluster client connects to the nodes it discovers with these alone, not with the seed URLs.
 */
export function clusterDefaults(url: string): { username?: string; password?: string; tls: boolean } {
  const parsed = new URL(url);
  const take = (inInfo: string, name: string) => (inInfo ? decodeURIComponent(inInfo) : parsed.searchParams.get(name) || undefined);
  const [username, password] = [take(parsed.username, 'username'), take(parsed.password, 'password')];
  return { ...(username ? { username } : {}), ...(password ? { password } : {}), tls: parsed.protocol === 'rediss:' };
}

/**
 * Your project's ioredis or node-redis, connected to `urls` (several: a Redis Cluster) within
 * `timeoutMs`, else a CliError naming the last connection error. `command` starts the messages.
 * `keyPrefix`: ioredis's, as your app's client has it (node-redis has none).
 */
export async function connect(urls: string[], cluster: boolean, command = 'inbox', timeoutMs = 10_000, keyPrefix?: string): Promise<Connected> {
  const require = createRequire(join(process.cwd(), 'package.json'));
  const load = async (name: string) => {
    try {
      return (await import(pathToFileURL(require.resolve(name)).href)) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  };
  let last = '';
  let refused: (error: CliError) => void = () => {};
  const remember = (error?: unknown) => {
    if (!(error instanceof Error)) return;
    last = error.message;
    // A refused password is final: both clients would try it again until the bound, to the same answer.
    if (CREDENTIALS_REFUSED.test(last))
      refused(new CliError(`${command}: Redis at ${urls.map(shown).join(', ')} refused the credentials (${last}); ${CREDENTIALS_FIX}`));
  };
  // Both clients retry a refused connection without end (node-redis's connect() never settles): bounded here.
  const within = <T>(pending: Promise<T>, giveUp: () => void): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(async () => {
        giveUp();
        // TLS to a plain port: the server waits for a line the handshake never sends, and neither client says why.
        const plain = (await Promise.all(urls.filter((u) => u.startsWith('rediss:')).map(speaksPlainRedis))).some(Boolean);
        const why = plain ? `: ${PLAIN_NOT_TLS}: use redis:// (or the port your Redis serves TLS on)` : last ? ` (${last})` : '';
        reject(new CliError(`${command}: could not connect to Redis at ${urls.map(shown).join(', ')} within ${timeoutMs / 1000} s${why}`));
      }, timeoutMs);
      refused = (error) => (clearTimeout(timer), giveUp(), reject(error));
      pending.then(
        (value) => (clearTimeout(timer), resolve(value)),
        (error: unknown) => (clearTimeout(timer), giveUp(), reject(error)),
      );
    });
  // Neither client bounds a command: a Redis frozen after it connected (SIGSTOP, a stalled host) would hold it forever.
  const answered =
    (send: (args: string[]) => Promise<unknown>) =>
    (args: string[]): Promise<unknown> =>
      bounded(
        () => send(args),
        timeoutMs,
        // ETIMEDOUT: what doctor-redis.ts tells from a refusal (a missing permission).
        () => Object.assign(new Error(`Redis did not answer ${args[0]} within ${timeoutMs / 1000} s (frozen, or too busy)`), { code: 'ETIMEDOUT' }),
      );
  const io = await load('ioredis');
  if (io) {
    type IoClient = RedisClient & {
      on(event: string, f: (e?: unknown) => void): void;
      once(event: string, f: (e?: unknown) => void): void;
      disconnect(): void;
      call(...args: string[]): Promise<unknown>;
    };
    const { Redis, Cluster } = ((io.default as Record<string, unknown> | undefined)?.Cluster ? io.default : io) as Record<
      string,
      new (...a: unknown[]) => IoClient
    >;
    const { tls, ...auth } = clusterDefaults(urls[0]);
    const client = cluster
      ? new Cluster(
          urls.map((u) => ({ host: new URL(u).hostname, port: Number(new URL(u).port) || 6379 })),
          { ...(keyPrefix ? { keyPrefix } : {}), redisOptions: { ...auth, ...(tls ? { tls: {} } : {}) } },
        )
      : new Redis(urls[0], keyPrefix ? { keyPrefix } : {});
    client.on('error', remember);
    await within(new Promise<void>((resolve) => client.once('ready', () => resolve())), () => client.disconnect());
    return { client, send: answered((args) => client.call(...args)), close: async () => client.disconnect() };
  }
  const node = await load('redis');
  if (node && keyPrefix)
    throw new CliError(`${command}: --key-prefix is ioredis's keyPrefix, and this project has node-redis (which puts nothing before keys): leave it out`, 2);
  if (node) {
    type NodeClient = RedisClient & {
      on(event: string, f: (e?: unknown) => void): void;
      connect(): Promise<unknown>;
      disconnect(): Promise<void>;
      destroy?(): void;
      sendCommand(args: string[]): Promise<unknown>;
    };
    const create = node as { createClient(o: object): NodeClient; createCluster(o: object): NodeClient };
    const { tls, ...auth } = cluster ? clusterDefaults(urls[0]) : { tls: false };
    const client = cluster
      ? create.createCluster({ rootNodes: urls.map((url) => ({ url })), defaults: { ...auth, ...(tls ? { socket: { tls: true } } : {}) } })
      : create.createClient({ url: urls[0] });
    client.on('error', remember);
    await within(client.connect(), () => void (client.destroy ? client.destroy() : client.disconnect().catch(() => {})));
    return { client, send: answered((args) => client.sendCommand(args)), close: () => client.disconnect() };
  }
  throw new CliError(`${command}: no Redis client found from ${process.cwd()}; run this in your project (with ioredis or redis installed)`, 2);
}

/**
 * Redis URLs (one, or a comma-separated list) as printed: every password masked, in the user info
 * (up to its last `@`, as URL parsers take it) or as a query parameter (ioredis takes
 * `?password=`), in a mistyped URL too (`redis:/…`, `http://…`): the one a user pastes by mistake.
 */
export function shown(urls: string): string {
  return (
    urls
      .split(',')
      // One that does not parse (a password with / or # pasted as it is): everything up to its last @.
      .map((url) => (URL.canParse(url) ? url : url.replace(/^([a-z][\w+.-]*:\/*).*@/i, '$1***@')))
      .map((url) => url.replace(/^([^:/?#]*:\/*[^/?#@:]*:)[^/?#]*@/, '$1***@').replace(/([?&][^=&#]*(?:pass|auth|secret|token)[^=&#]*=)[^&#]*/gi, '$1***'))
      .join(',')
  );
}

/**
 * The comma-separated Redis URLs `given` as `name` (`--redis`, `REDIS_URL`), each a redis:// URL
 * that parses, else exit 2: a password with `/`, `#` or `?` in it, pasted as it is, ends the URL's
 * host early, and both clients (and doctor) would stop on a bare "Invalid URL".
 */
export function redisUrls(given: string, command: string, name: string): string[] {
  const urls = given.split(',').map((u) => u.trim());
  for (const url of urls) {
    if (!/^rediss?:\/\/[^/]/.test(url)) throw new CliError(`${command}: ${name} must be a redis:// URL; got "${shown(url)}"`, 2);
    if (!URL.canParse(url))
      throw new CliError(
        `${command}: ${name} is not a valid URL: percent-encode a password with / # ? @ or : in it (encodeURIComponent), redis://:<encoded password>@host:6379; got "${shown(url)}"`,
        2,
      );
  }
  return urls;
}

/** Whether `url`'s host and port answer a plain-text PING as Redis does (`+PONG`, `-NOAUTH…`), within 1 s. */
function speaksPlainRedis(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connectTcp({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port) || 6379 });
    const done = (plain: boolean) => (socket.destroy(), resolve(plain));
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => done(/^[+-]/.test(data.toString('latin1'))));
  });
}
