/**
 * Runs `body` while errors thrown from timers are captured instead of reaching the test
 * runner: the SDK rethrows a listener's error from a timer, as any event emitter would.
 */
export async function captureTimerThrows(body: (wait: (ms: number) => Promise<void>) => Promise<void>): Promise<unknown[]> {
  const uncaught: unknown[] = [];
  const original = globalThis.setTimeout;
  globalThis.setTimeout = ((fn: () => void, ms?: number) =>
    original(() => {
      try {
        fn();
      } catch (e) {
        uncaught.push(e);
      }
    }, ms)) as typeof setTimeout;
  try {
    await body((ms) => new Promise((resolve) => original(resolve, ms)));
  } finally {
    globalThis.setTimeout = original;
  }
  return uncaught;
}
