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
  /** SIGKILL, a crash: waits for the exit. */
  kill(): Promise<void>;
}

export interface Cluster {
  nodes: ClusterNode[];
  urls: string[];
  /** Keys held by each node (DBSIZE), in node order. */
  sizes(): Promise<number[]>;
  /** The master that serves `key` now (asked of `via`, a live node). */
  masterOf(key: string, via?: ClusterNode): Promise<ClusterNode | undefined>;
  stop(): Promise<void>;
}

/** `redis-cli -p <port> <args…>`, its output trimmed. */
export function cli(port: number, ...args: string[]): Promise<string>;

/** Starts a cluster of `masters` masters with `replicas` replicas each (default none), each node on a free port with its own temp dir. */
export function startCluster(options?: { masters?: number; replicas?: number; nodeTimeoutMs?: number }): Promise<Cluster>;
