// What the exchange tells `onCacheError` (or, without it, one console.warn): a cache call that
// failed, timed out or gave junk, and a cache too slow for one getToken's budget.
import { describeValue } from '../../shared/check.js';
import { safeReport } from '../../shared/report.js';
import type { TokenCacheErrorInfo } from './token-cache.js';

type Operation = TokenCacheErrorInfo['operation'];

export interface CacheReporter {
  /** A failure (the guard reports only the ones worth telling), or an `invalid` answer of `get`. */
  report(operation: Operation, reason: TokenCacheErrorInfo['reason'], error: unknown, skipMs: number): void;
  /** The cache calls of one getToken took `cacheTimeout` in all: told at most once per cool-down. */
  overran(operation: Operation): void;
}

export function createCacheReporter(o: {
  onCacheError: ((info: TokenCacheErrorInfo) => void) | undefined;
  cacheTimeout: number;
  cooldown: number;
  /** A thrown value as a message, redacted. */
  thrown: (error: unknown) => string;
}): CacheReporter {
  let warned = false;
  const onCacheError =
    o.onCacheError ||
    ((info: TokenCacheErrorInfo) => {
      if (warned) return;
      warned = true;
      const skipping = info.skipMs > 0 ? ', and skipping the cache for ' + info.skipMs + ' ms' : '';
      console.warn(
        '[channel-sdk] token cache ' +
          info.operation +
          ' failed (' +
          info.message +
          '); asking the token endpoint instead' +
          skipping +
          '. Pass onCacheError to handle this yourself; this warning is shown once.',
      );
    });
  // A throwing hook must not turn a working fallback into a failure.
  const tell = safeReport(onCacheError);
  // A slow cache may overrun for every new user: one report per cool-down (at least a second).
  let toldOverrun = -Infinity;
  return {
    report(operation, reason, error, skipMs) {
      const message =
        reason === 'timeout'
          ? 'no answer within ' + o.cacheTimeout + ' ms'
          : reason === 'invalid'
            ? 'the cache returned ' + describeValue(error) + ', not a token'
            : o.thrown(error);
      tell({ operation, reason, message, skipMs });
    },
    overran(operation) {
      const now = Date.now();
      if (now - toldOverrun < Math.max(o.cooldown, 1000)) return;
      toldOverrun = now;
      const message =
        'the cache calls of one getToken took ' +
        o.cacheTimeout +
        ' ms in all (cacheTimeout); it asked the token endpoint without the rest: the cache answers, but slowly';
      tell({ operation, reason: 'timeout', message, skipMs: 0 });
    },
  };
}
