export interface InstanceConfig {
  /** The client's package: ioredis, ioredis-v5, redis, redis-v5 or redis-v4. */
  client: string;
  /** A single redis-server. */
  redisUrl?: string;
  /** A Redis Cluster instead: the nodes' `redis://host:port` URLs (ioredis `Cluster`, node-redis `createCluster`). */
  clusterNodes?: string[];
  /**
   * ioredis only: hand the client to the adapters at once, without waiting for its 'ready' (a
   * process that starts serving while it connects). node-redis needs `await client.connect()`.
   */
  cold?: boolean;
  baseUrl: string;
  accessKey: string;
  secretKey: string;
  latencyMs?: number;
  timeout?: number;
  prefix?: string;
  /** false: the Redis cache without its lock (get and set only). @default true */
  lock?: boolean;
  /** More createTokenExchange options. */
  exchangeOptions?: Record<string, unknown>;
  /** Serve the token route at /channel-token (the user id from the `x-user` header). */
  route?: boolean;
  /** Serve a webhook handler at /webhooks/channel with createRedisDedupStore under `<prefix>hooks:`. */
  webhookSecret?: string;
  /** How long the webhook callback takes. @default 50 */
  callbackMs?: number;
}

export interface CacheErrorInfo {
  operation: string;
  reason: string;
  message: string;
}

export interface InstanceResult {
  /** The distinct access tokens each user got in this instance. */
  distinct: Record<string, string[]>;
  errors: string[];
  maxLatencyMs: number;
  cacheErrors: CacheErrorInfo[];
}

export interface StreamOptions {
  /** Users cached before (run them first): each tick calls one plainly and force-refreshes another. */
  warm: string[];
  durationMs: number;
  intervalMs: number;
}

export interface StreamResult {
  /** Each call that resolved: its kind, start (epoch ms) and latency (ms). */
  calls: Array<{ kind: 'new' | 'cached' | 'forced'; at: number; ms: number }>;
  errors: string[];
  cacheErrors: CacheErrorInfo[];
}

export interface Instances {
  ports: Array<number | undefined>;
  run(users: string[], concurrency: number): Promise<InstanceResult[]>;
  stream(options: StreamOptions): Promise<StreamResult[]>;
  report(): Promise<Array<{ callbacks: number; cacheErrors: CacheErrorInfo[] }>>;
  kill(index: number, signal?: NodeJS.Signals): Promise<void>;
  close(): Promise<void[]>;
}

export function startInstances(count: number, config: InstanceConfig): Promise<Instances>;

/** The next IPC message of `type` from `child`; rejects (with its output) if it exits first. */
export function next(child: import('node:child_process').ChildProcess, type: string): Promise<Record<string, unknown>>;
