export interface InboxProcessConfig {
  /** ioredis, ioredis-v5, redis, redis-v5 or redis-v4. */
  client: string;
  redisUrl?: string;
  clusterNodes?: string[];
  prefix: string;
  /** More createRedisInbox options. */
  inboxOptions?: Record<string, unknown>;
  /** Serve a receiver with this webhook secret. */
  serve?: string;
  /** Run a worker. */
  work?: { concurrency?: number; callbackMs?: number };
}

export interface InboxReport {
  stage: string;
  level: string;
  id?: string;
  orderNo?: string;
  attempt?: number;
  status?: number;
  message: string;
}

export interface InboxProcess {
  pid: number;
  port?: number;
  url?: string;
  kill(): Promise<void>;
  reports(): Promise<InboxReport[]>;
  close(): Promise<InboxReport[]>;
}

export function startInboxProcess(config: InboxProcessConfig): Promise<InboxProcess>;

export interface Runs {
  order: string;
  /** The pid of each run started, and of each that ended. */
  starts: number[];
  ends: number[];
}

export function readLog(
  lrange: (key: string, start: number, stop: number) => Promise<string[]>,
  prefix: string,
): Promise<{ lines: Array<{ pid: number; key: string; order: string; attempt: number; phase: string }>; byKey: Map<string, Runs> }>;
