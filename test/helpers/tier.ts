/**
 * Sizes for the two tiers (vitest.config.ts, CONTRIBUTING "Which tier a test is in"). `npm test` must
 * pass on a busy 2-core machine, so a test there neither storms (hundreds of calls at once), nor
 * searches at length (property and model runs), nor waits for a window of milliseconds that a busy
 * machine can miss. Such a test takes its size from `sized`, or, bound to the wall clock, is written
 * `test.runIf(FULL)(...)`: the integration tier (`CHANNEL_TEST_FULL=1`, set by vitest.config.ts)
 * runs it full-size, in a file of its own (`*.integration.test.ts`) or by running its file again
 * (vitest.config.ts `fullSize`, where such a file must be listed).
 */
export const FULL = process.env.CHANNEL_TEST_FULL === '1';

/** `full` in the integration tier, `fast` in npm test. */
export const sized = (full: number, fast: number): number => (FULL ? full : fast);
