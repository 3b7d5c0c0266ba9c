// Bounds on reading request bodies that a per-request size cap cannot give: a deadline for each
// body, and a budget of bytes held at once across every request a handler serves. Without them
// connections that each send a body just under the cap and stall pin that many bodies' worth of
// memory for as long as node:http lets them (its requestTimeout). Both front doors (http/route.ts, http/node-handler.ts) read through a ticket.

/** Why reading a body was stopped: past its deadline, or dropped to make room in the budget. */
export type BodyStop = 'timeout' | 'busy';

/** One body being read, against its guard's deadline and byte budget. */
export interface BodyTicket {
  /** Counts `n` more bytes; false when the budget cannot hold them even after dropping stalled bodies. */
  take(n: number): boolean;
  /** Set by the reader: called at most once, when reading must stop. */
  onStop: ((why: BodyStop) => void) | undefined;
  /** The body is complete: no more deadline or eviction; its bytes stay counted until `close`. */
  read(): void;
  /** The request is answered (or its body dropped): its bytes leave the budget. Idempotent. */
  close(): void;
}

export interface BodyGuard {
  open(): BodyTicket;
}

/**
 * @param timeoutMs how long a body may take, from the moment the handler starts reading it
 * @param maxBytes bytes of bodies held at once, across requests
 */
export function createBodyGuard(timeoutMs: number, maxBytes: number): BodyGuard {
  const state: GuardState = { held: 0, maxBytes, reading: new Set(), byStart: new Set() };
  let timer: ReturnType<typeof setInterval> | undefined;
  // One timer for every body rather than one per request (a timer per push is measurable on small
  // pushes: npm run bench:webhooks); it stops once a sweep finds nothing to watch. A body is stopped at most one
  // tick after its deadline.
  const tick = Math.max(5, Math.min(250, timeoutMs / 8));
  const sweep = () => {
    if (state.byStart.size === 0) {
      clearInterval(timer);
      timer = undefined;
      return;
    }
    const due = Date.now() - timeoutMs;
    for (const ticket of state.byStart) {
      if (ticket.started > due) break;
      ticket.stop('timeout');
    }
  };
  return {
    open() {
      const ticket = new Ticket(state);
      if (!timer) {
        timer = setInterval(sweep, tick);
        (timer as { unref?: () => void }).unref?.();
      }
      return ticket;
    },
  };
}

interface GuardState {
  held: number;
  readonly maxBytes: number;
  // Bodies still arriving, least recently fed first (a chunk moves its body to the end): the
  // front is the most stalled body, the first to give way when the budget is full, so a push
  // that arrives in one go is served while stalled bodies are dropped.
  readonly reading: Set<Ticket>;
  // One deadline length for all, so insertion order is deadline order.
  readonly byStart: Set<Ticket>;
}

class Ticket implements BodyTicket {
  readonly started = Date.now();
  bytes = 0;
  onStop: ((why: BodyStop) => void) | undefined = undefined;

  constructor(private readonly state: GuardState) {
    state.reading.add(this);
    state.byStart.add(this);
  }

  take(n: number): boolean {
    const state = this.state;
    if (!state.byStart.has(this)) return false; // stopped already
    state.reading.delete(this);
    state.reading.add(this);
    this.bytes += n;
    state.held += n;
    for (const other of state.reading) {
      if (state.held <= state.maxBytes) break;
      if (other !== this && other.bytes > 0) other.stop('busy');
    }
    if (state.held <= state.maxBytes) return true;
    this.close(); // nothing could give way: this body is refused (the reader answers)
    return false;
  }

  read(): void {
    this.state.reading.delete(this);
    this.state.byStart.delete(this);
    this.onStop = undefined;
  }

  close(): void {
    this.read();
    this.state.held -= this.bytes;
    this.bytes = 0;
  }

  /** Ends reading from outside (deadline, eviction): frees the bytes, then tells the reader. */
  stop(why: BodyStop): void {
    const listener = this.onStop;
    this.close();
    listener?.(why);
  }
}
