export const redisCliPath: string;
export const hasCluster: boolean;
export const clusterMissing: string;

export interface ClusterNode {
  port: number;
  /** `redis://127.0.0.1:<port>` */
  url: string;
  /** SIGTERM, and waits for the exit. */
  stop(): Promise<void>;
  /** SIGSTOP: connections stay open, nothing answers. */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
}

export interface Cluster {
  nodes: ClusterNode[];
  urls: string[];
  /** Keys held by each node (DBSIZE), in node order. */
  sizes(): Promise<number[]>;
  stop(): Promise<void>;
}

/** `redis-cli -p <port> <args…>`, its output trimmed. */
export function cli(port: number, ...args: string[]): Promise<string>;

/** Starts a cluster of `masters` masters (no replicas), each node on a free port with its own temp dir. */
export function startCluster(options?: { masters?: number; nodeTimeoutMs?: number }): Promise<Cluster>;
