export const redisServerPath: string;

export interface RedisServer {
  port: number;
  /** `redis://127.0.0.1:<port>` */
  url: string;
  /** Stops the server for good (SIGTERM, waits for the exit). */
  stop(): Promise<void>;
  /** Freezes the process (SIGSTOP): connections stay open, nothing answers. */
  pause(): void;
  /** Thaws a paused server (SIGCONT). */
  resume(): void;
}

/** Starts a private redis-server on 127.0.0.1 at a free port, with no persistence. */
export function startRedis(): Promise<RedisServer>;
