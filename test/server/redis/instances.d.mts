export interface InstanceConfig {
  /** The client's package: ioredis, ioredis-v5, redis, redis-v5 or redis-v4. */
  client: string;
  redisUrl: string;
  baseUrl: string;
  accessKey: string;
  secretKey: string;
  latencyMs?: number;
  timeout?: number;
  prefix?: string;
  /** false: the Redis cache without its lock (get and set only). @default true */
  lock?: boolean;
}

export interface InstanceResult {
  /** The distinct access tokens each user got in this instance. */
  distinct: Record<string, string[]>;
  errors: string[];
  maxLatencyMs: number;
  cacheErrors: Array<{ operation: string; reason: string; message: string }>;
}

export interface Instances {
  run(users: string[], concurrency: number): Promise<InstanceResult[]>;
  close(): Promise<void[]>;
}

export function startInstances(count: number, config: InstanceConfig): Promise<Instances>;
