/**
 * happy-dom, without its imitation of a browser's devtools network log. happy-dom prints
 * "GET <url> 401 (Unauthorized)" for every non-2xx fetch and an ECONNRESET trace for every
 * dropped connection, straight to the process. The client tests provoke hundreds of them on
 * purpose (401 storms, resets), and they are the environment's lines, not the SDK's (which
 * logs nothing). This environment drops exactly those two kinds of line and passes the rest.
 */
import { builtinEnvironments, type Environment } from 'vitest/environments';

const networkLine = /^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) \S+ \d{3} \([^)]*\)$/;

function isNetworkNoise(args: unknown[]): boolean {
  if (args.length !== 1) return false;
  const [value] = args;
  if (typeof value === 'string') return networkLine.test(value);
  return value instanceof Error && ((value as { code?: string }).code === 'ECONNRESET' || value.message === 'socket hang up');
}

const happyDom = builtinEnvironments['happy-dom'];

export default {
  name: 'quiet-happy-dom',
  viteEnvironment: 'client',
  async setup(global, options) {
    const real = global.console as Console;
    const quiet = Object.create(real) as Console;
    quiet.error = (...args: unknown[]) => {
      if (!isNetworkNoise(args)) real.error(...args);
    };
    // happy-dom takes the global console at setup for its pages.
    global.console = quiet;
    const env = await happyDom.setup(global, options);
    return {
      async teardown(g) {
        await env.teardown(g);
        g.console = real;
      },
    };
  },
} satisfies Environment;
