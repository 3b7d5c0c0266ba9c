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
  /** Stops the server (SIGTERM, waits for the exit) so that `up()` can start it again. */
  down(): Promise<void>;
  /** Starts a server that is `down()` again on the same port, with its data when started with `persist`. */
  up(): Promise<void>;
}

/** Starts a private redis-server on 127.0.0.1 at a free port, with no persistence unless `persist` (an append-only file). */
export function startRedis(options?: { persist?: boolean }): Promise<RedisServer>;
