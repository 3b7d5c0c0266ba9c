export const redisServerPath: string;

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number>;
/** Spawns the server with `args`, waits until it is ready: the child, or undefined when its port was taken meanwhile. */
export function spawnServer(args: string[]): Promise<import('node:child_process').ChildProcess | undefined>;
/** stop() (SIGTERM, then `afterStop` once it exited), pause() (SIGSTOP), resume() (SIGCONT) of a server process. */
export function controlsOf(
  child: import('node:child_process').ChildProcess,
  afterStop?: () => void,
): Pick<RedisServer, 'stop' | 'pause' | 'resume'> & { kill(): Promise<void> };
/** Resolves once `child` has exited. */
export function exited(child: import('node:child_process').ChildProcess): Promise<void>;

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

/**
 * Starts a private redis-server on 127.0.0.1 at a free port, with no persistence unless `persist`
 * (an append-only file); `args`: more server arguments, e.g. `['--maxmemory', '3mb']`.
 */
export function startRedis(options?: { persist?: boolean; args?: string[] }): Promise<RedisServer>;
