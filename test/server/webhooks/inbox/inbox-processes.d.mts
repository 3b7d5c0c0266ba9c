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
  /** Where the callbacks log: the Redis list `<prefix>log` (default), or the parent (`lines`). */
  logTo?: 'redis' | 'ipc';
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
  /** What its callbacks logged through IPC (logTo 'ipc'). */
  lines: LogLine[];
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

export interface LogLine {
  pid: number;
  key: string;
  order: string;
  attempt: number;
  phase: 'start' | 'end';
}

export function readLog(
  lrange: (key: string, start: number, stop: number) => Promise<string[]>,
  prefix: string,
): Promise<{ lines: LogLine[]; byKey: Map<string, Runs> }>;

/** Log lines grouped per dedupKey. */
export function byKeyOf(lines: LogLine[]): { lines: LogLine[]; byKey: Map<string, Runs> };
