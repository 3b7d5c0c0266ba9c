/**
 * Sizes for the two tiers (vitest.config.ts, CONTRIBUTING "Which tier a test is in"). `npm test` must
 * pass on a busy 2-core machine, so a test there neither storms (hundreds of calls at once), nor
 * searches at length (property and model runs), nor waits for a window of milliseconds that a busy
 * machine can miss. Such a test takes its size from here, or is marked `wallClock`: the integration
 * tier (`CHANNEL_TEST_FULL=1`, set by vitest.config.ts) runs it full-size, in a file of its own
 * (`*.integration.test.ts`) or by running its file again (vitest.config.ts `fullSize`).
 */
import { test } from 'vitest';

export const FULL = process.env.CHANNEL_TEST_FULL === '1';

/** `full` in the integration tier, `fast` in npm test. */
export const sized = (full: number, fast: number): number => (FULL ? full : fast);

/**
 * A test bound to the wall clock (a timeout of a few ms beaten or missed, an order decided by
 * timers racing): the integration tier only. Its file must be in vitest.config.ts `fullSize`.
 */
export const wallClock: ReturnType<typeof test.runIf> = test.runIf(FULL);
