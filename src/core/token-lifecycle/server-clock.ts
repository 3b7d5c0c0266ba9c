/**
 * What the client knows of the service's clock: the offset `server time - device time` in ms,
 * as a range, learnt from the `Date` header of the service's answers. A token's own `exp` read
 * against it says how long the token has left whatever the device clock says (wrong by hours
 * is common) and however old the token was when the provider handed it over (a backend cache).
 */
export interface ServerClock {
  /**
   * A response's headers (its `Date` is read), with the device times its request was sent and
   * answered. Returns whether the estimate changed.
   */
  observe(headers: DateSource, sentAt: number, doneAt: number): boolean;
  /** `[lowest, highest]` possible offset, or undefined while none is known or after distrust(). */
  range(): [number, number] | undefined;
  /** The estimate disagreed with what a fresh token says of the server's clock: never used again. */
  distrust(): void;
}

/** A response's headers, as far as the clock reads them. */
export type DateSource = { get(name: string): string | null | undefined };

export function createServerClock(): ServerClock {
  let known: [number, number] | undefined;
  let trusted = true;
  let readAt = -Infinity;
  return {
    observe(headers, sentAt, doneAt) {
      // One Date a second is all the estimate needs (the header counts whole seconds): reading it
      // costs a fetch Response more than everything else here (bench:fetch measures it). The answers that end within a second after the last one read are skipped;
      // a device clock set back reads at once.
      if (doneAt >= readAt && doneAt - readAt < 1000) return false;
      readAt = doneAt;
      // Read a second apart, the header has moved on each time: no parse is saved by keeping the last.
      const date = headers.get('date');
      const stamp = trusted && date ? Date.parse(date) : NaN;
      if (!(stamp > 0)) return false;
      // The server stamped a time in [stamp, stamp + 1 s) (whole seconds) while the device
      // read a time in [sentAt, doneAt].
      const low = stamp - doneAt;
      const high = stamp + 1000 - sentAt;
      const before = known;
      // Two true ranges overlap, and the overlap is the tighter estimate; disjoint ones mean the
      // device clock was reset in between: the newer one holds.
      known = before && low <= before[1] && high >= before[0] ? [Math.max(low, before[0]), Math.min(high, before[1])] : [low, high];
      return !before || known[0] !== before[0] || known[1] !== before[1];
    },
    range: () => (trusted ? known : undefined),
    distrust() {
      trusted = false;
    },
  };
}
