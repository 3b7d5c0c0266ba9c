// `channel-sandbox doctor`: the options and CHANNEL_* variables read and checked, Redis reached
// through the project's own client (cli-redis.ts), then the checks of dist/check.cjs.
import { externalUserIdProblem } from '../../server/tokens/exchange-options.js';
import { normalizeBaseUrl } from '../../shared/url.js';
import { FAILED_MASTER, type RedisTarget } from '../check/doctor-redis.js';
import { formatDoctorReport, runDoctor } from '../check/checks.js';
import { headersFrom, httpUrl, type Values } from './cli-args.js';
import { CliError } from './cli-client.js';
import { connect, redisUrls, shown, type Connected } from './cli-redis.js';

/** An option, else its environment variable; with where it came from. */
function given(values: Values, option: string, variable?: string): { value?: string; from?: string } {
  const value = values[option];
  if (typeof value === 'string' && value !== '') return { value };
  const env = variable ? process.env[variable] : undefined;
  return env ? { value: env, from: variable } : {};
}

/** Runs `doctor`; resolves to the exit code. */
export async function doctor(values: Values): Promise<number> {
  if (values.sandbox !== undefined)
    throw new CliError("doctor: pass the sandbox's URL as --service (doctor talks to it as your backend does: token exchange, clock)", 2);
  const service = given(values, 'service', 'CHANNEL_BASE_URL');
  if (service.value !== undefined) {
    try {
      service.value = normalizeBaseUrl(service.value);
    } catch (error) {
      // The URL it quotes, its query values masked: a key pasted into one (?api_key=…) is not printed.
      const message = (error as Error).message.replace(/^\[channel-sdk\] baseUrl /, '').replace(/([?&][^=&#"]*=)[^&#"]*/g, '$1***');
      throw new CliError(`doctor: ${service.from ?? '--service'}: ${message}`, 2);
    }
  }
  const accessKey = given(values, 'access-key', 'CHANNEL_ACCESS_KEY').value;
  const secretKey = given(values, 'secret-key', 'CHANNEL_SECRET_KEY').value;
  if ((accessKey === undefined) !== (secretKey === undefined))
    throw new CliError('doctor: pass both --access-key and --secret-key (or CHANNEL_ACCESS_KEY and CHANNEL_SECRET_KEY), or neither', 2);
  if (accessKey !== undefined && service.value === undefined)
    throw new CliError('doctor: the keys need --service (or CHANNEL_BASE_URL): the base URL they sign for', 2);
  const user = values.user as string | undefined;
  if (user !== undefined && externalUserIdProblem(user)) throw new CliError('doctor: --user: the user id ' + externalUserIdProblem(user), 2);
  const tokenRoute = given(values, 'token-route').value;
  if (tokenRoute !== undefined) httpUrl(tokenRoute, 'doctor: --token-route');
  if (values.header !== undefined && tokenRoute === undefined) throw new CliError('doctor: --header is for the token route: pass --token-route URL too', 2);
  const headers = headersFrom(values.header as string[] | undefined, 'doctor');
  const webhookUrl = given(values, 'webhook-url').value;
  const webhookSecret = given(values, 'webhook-secret', 'CHANNEL_WEBHOOK_SECRET').value;
  if (webhookUrl !== undefined) httpUrl(webhookUrl, 'doctor: --webhook-url');
  if (webhookUrl !== undefined && webhookSecret === undefined)
    throw new CliError('doctor: which secret does your receiver verify with? pass --webhook-secret whsec_… or set CHANNEL_WEBHOOK_SECRET', 2);
  const redis = given(values, 'redis', 'REDIS_URL');
  const prefix = values.prefix as string | undefined;
  if (prefix !== undefined && redis.value === undefined) throw new CliError('doctor: --prefix is the inbox prefix on Redis: pass --redis URL too', 2);
  const keyPrefix = values['key-prefix'] as string | undefined;
  if (keyPrefix !== undefined && prefix === undefined)
    throw new CliError("doctor: --key-prefix is your ioredis client's keyPrefix for the inbox: pass --prefix too", 2);
  const urls = redis.value === undefined ? [''] : redisUrls(redis.value, 'doctor', redis.from ?? '--redis');
  if (service.value === undefined && tokenRoute === undefined && webhookUrl === undefined && redis.value === undefined)
    throw new CliError(
      'doctor: nothing to check: pass --service URL (with --access-key and --secret-key), --token-route URL, --webhook-url URL, --redis URL, or set CHANNEL_BASE_URL… (channel-sandbox doctor --help)',
      2,
    );

  const connections: Connected[] = [];
  // Connected while the other parts run: an unreachable Redis costs no time of its own.
  const targets = redis.value === undefined ? undefined : redisTargets(urls, !!values.cluster, prefix, connections, keyPrefix);
  try {
    const from = { ...(service.from ? { service: service.from } : {}), ...(redis.from ? { redis: redis.from } : {}) };
    const report = await runDoctor({
      service: service.value,
      accessKey,
      secretKey,
      user,
      tokenRoute,
      headers,
      webhookUrl,
      webhookSecret,
      redis: targets,
      from,
    });
    console.log(values.json ? JSON.stringify(report) : formatDoctorReport(report, from));
    return report.ok ? 0 : 1;
  } finally {
    await targets?.catch(() => {});
    await Promise.all(connections.map((c) => c.close().catch(() => {})));
  }
}

/**
 * One target per node given, the inbox's stats on the first. A Cluster (`--cluster`, or found by
 * asking the first node `CLUSTER NODES`) gets one per node given and per master holding slots:
 * a master left out of the URLs would have its eviction policy go unchecked.
 */
async function redisTargets(
  urls: string[],
  cluster: boolean,
  prefix: string | undefined,
  connections: Connected[],
  keyPrefix?: string,
): Promise<RedisTarget[]> {
  // keyPrefix only for the client the inbox's stats go through: the nodes' INFO and CONFIG name no key.
  const reach = (nodes: string[], asCluster: boolean, withKeyPrefix?: string) =>
    connect(nodes, asCluster, 'doctor', 5_000, withKeyPrefix).then(
      (c) => (connections.push(c), c),
      (error: Error) => error,
    );
  const first = await reach([urls[0]], false);
  const masters = first instanceof Error ? [] : await mastersOf(first, urls[0]);
  const asCluster = cluster || masters.length > 0;
  const named = cluster ? urls : urls.slice(0, 1);
  const seen = new Set(named.map(hostPort));
  const all = [...named, ...masters.map((m) => m.url).filter((url) => !seen.has(hostPort(url)) && seen.add(hostPort(url)))];
  // A master the Cluster marks failed is a line of its own (its slots are refused), not left out nor waited for.
  const failed = new Map(masters.flatMap((m) => (m.failed ? [[hostPort(m.url), m.failed] as const] : [])));
  const nodes = [
    first,
    ...(await Promise.all(all.slice(1).map((url) => (failed.has(hostPort(url)) ? new Error(failed.get(hostPort(url))) : reach([url], false))))),
  ];
  const live = all.filter((url) => !failed.has(hostPort(url)));
  const whole = asCluster || keyPrefix ? await reach(asCluster ? live : urls, asCluster, keyPrefix) : nodes[0];
  let stats: RedisTarget['stats'];
  let otherKeyPrefixes: RedisTarget['otherKeyPrefixes'];
  if (prefix !== undefined && !(whole instanceof Error)) {
    // Loaded here, not with the CLI: the other commands do without the server build.
    const { createRedisInbox } = await import('../../server-node.js');
    stats = async () => ({ ...(await createRedisInbox(whole.client, { prefix }).stats()) });
    const { inboxSettings } = await import('../../server/webhooks/inbox/inbox-options.js');
    const reachable = nodes.filter((node): node is Connected => !(node instanceof Error));
    // A prefix the inbox refuses: stats() says why, there is no stream name to look for.
    const stream = (() => {
      try {
        return inboxSettings({ prefix }).keys.stream;
      } catch {
        return undefined;
      }
    })();
    if (stream !== undefined) otherKeyPrefixes = () => streamsElsewhere(reachable, stream, keyPrefix ?? '');
  }
  return nodes.map((node, i) => ({
    url: shown(asCluster ? all[i] : urls.join(',')),
    ...(asCluster ? { cluster: true } : {}),
    ...(node instanceof Error ? { error: node.message.replace(/^doctor: /, '') } : { command: node.send }),
    ...(i === 0 && prefix !== undefined
      ? {
          prefix,
          inboxArgs: `${asCluster ? '--cluster ' : ''}--redis ${all.map(shown).join(',')}${keyPrefix ? ' --key-prefix ' + keyPrefix : ''}`,
          ...(stats ? { stats } : {}),
          ...(otherKeyPrefixes ? { otherKeyPrefixes } : {}),
        }
      : {}),
  }));
}

/** Keys scanned per node at most: a Redis of many keys is looked at in part, and said so. */
const SCAN_BOUND = 200_000;

/**
 * The keys on `nodes` (every master) that end as this inbox's `stream` does under another keyPrefix
 * than `keyPrefix`: the keyPrefix each implies, and the stream's length.
 */
async function streamsElsewhere(nodes: Connected[], stream: string, keyPrefix: string) {
  const found = new Map<string, number>();
  let complete = true;
  for (const node of nodes) {
    let cursor = '0';
    for (let scanned = 0; ; scanned += 1000) {
      const [next, keys] = (await node.send(['SCAN', cursor, 'MATCH', '*' + stream.replace(/[*?[\]\\]/g, '\\$&'), 'COUNT', '1000'])) as [unknown, unknown[]];
      cursor = String(next);
      for (const key of keys.map(String)) {
        if (!key.endsWith(stream) || key === keyPrefix + stream || found.has(key)) continue;
        // A Cluster replica answers MOVED: its master, scanned too, tells the length.
        const length = await node.send(['XLEN', key]).then(Number, () => undefined);
        if (length !== undefined) found.set(key, length);
      }
      if (cursor === '0') break;
      if (scanned >= SCAN_BOUND) {
        complete = false;
        break;
      }
    }
  }
  return { found: [...found].map(([key, length]) => ({ keyPrefix: key.slice(0, -stream.length), length })), complete };
}

const hostPort = (url: string) => new URL(url).host;

/**
 * The URLs of a Cluster's masters that hold slots (from `base`, with its user, password and TLS),
 * with why when the Cluster marks one failed; none when not a Cluster.
 */
async function mastersOf(node: Connected, base: string): Promise<Array<{ url: string; failed?: string }>> {
  let reply: unknown;
  try {
    reply = await node.send(['CLUSTER', 'NODES']);
  } catch {
    return []; // cluster support disabled, or CLUSTER not allowed to this user
  }
  // <id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slot>...
  return String(reply)
    .split('\n')
    .map((line) => line.trim().split(' '))
    .filter((f) => f.length > 8 && f[2].split(',').includes('master') && !/noaddr/.test(f[2]))
    .map((f) => {
      const address = f[1].split('@')[0];
      const colon = address.lastIndexOf(':');
      const url = new URL(base);
      const host = address.slice(0, colon) || url.hostname; // an empty host: the node does not know its own address
      url.hostname = host.includes(':') ? `[${host}]` : host;
      url.port = address.slice(colon + 1);
      const failed = f[2].split(',').includes('fail') ? `${FAILED_MASTER} (${f[2]}), and no replica took over its slots ${f.slice(8).join(' ')}` : undefined;
      return { url: url.href.replace(/\/$/, ''), ...(failed ? { failed } : {}) };
    });
}
