/**
 * The fast tier's setup (vitest.config.ts): `vi.waitFor` gives up after 1 s by default, which a
 * busy 2-core machine can spend on one local HTTP round trip (seen in the eighth audit, at load
 * 20-50). A wait is bounded by the test's own timeout instead: 10 s unless the call says otherwise.
 */
import { vi } from 'vitest';

const waitFor = vi.waitFor.bind(vi);
vi.waitFor = ((callback: Parameters<typeof waitFor>[0], options?: Parameters<typeof waitFor>[1]) =>
  waitFor(callback, typeof options === 'number' ? options : { timeout: 10_000, ...options })) as typeof vi.waitFor;
