import { isolated } from '../../shared/report.js';
import type { Progress, SignalLike } from '../types.js';

/** A call's progress as its caller sees it: `report` takes the transport's, `end` the final 1. */
export interface Monotonic {
  report(p: Progress): void;
  end(): void;
}

/**
 * Progress as the caller sees it: percent clamped to 0..1 and never going back (a replay after
 * a 401 starts its transfer over, and the caller sees its value held until the replay passes
 * it), ended by exactly one 1 when the call resolves, and silent once the call is aborted. A
 * listener that throws surfaces as an uncaught error without failing the transfer, as event
 * listeners do.
 */
export function monotonic(listener: (progress: Progress) => void, stop: SignalLike): Monotonic {
  let shown = -1;
  let total = 0;
  const emit = (percent: number, transferredBytes: number, totalBytes: number) => {
    shown = percent;
    isolated(() => listener({ percent, transferredBytes, totalBytes }));
  };
  return {
    report(p) {
      if (p.totalBytes > 0) total = p.totalBytes;
      const percent = Math.min(1, Math.max(0, p.percent || 0));
      if (percent > shown && !stop.aborted) emit(percent, p.transferredBytes, p.totalBytes > 0 ? p.totalBytes : 0);
    },
    end() {
      if (shown < 1 && !stop.aborted) emit(1, total, total);
    },
  };
}
