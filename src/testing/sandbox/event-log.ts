import type { SandboxEvent, SandboxEventBody } from './types.js';

/** How many past events a new `GET /__sandbox/events` client can ask for (`Last-Event-ID`). */
const HISTORY = 1000;

/** The sandbox's events: numbered, timed, kept for late subscribers, handed to every listener. */
export function createEventLog(clock: () => number) {
  const history: SandboxEvent[] = []; // a ring: event n sits at n % HISTORY
  const subscribers = new Set<(event: SandboxEvent) => void>();
  let seq = 0;

  return {
    /** Stamps `body` (a fresh object from the caller) with its seq and time, keeps it and hands it out. */
    emit(body: SandboxEventBody): SandboxEvent {
      const event = body as SandboxEvent;
      event.seq = ++seq;
      event.at = clock();
      history[seq % HISTORY] = event;
      for (const listener of subscribers) {
        try {
          listener(event);
        } catch (error) {
          // A listener's bug surfaces as an uncaught error without failing the request being answered.
          queueMicrotask(() => {
            throw error;
          });
        }
      }
      return event;
    },
    subscribe(listener: (event: SandboxEvent) => void): () => void {
      subscribers.add(listener);
      return () => void subscribers.delete(listener);
    },
    /** The kept events after `seq`, oldest first. */
    since(after: number): SandboxEvent[] {
      const out: SandboxEvent[] = [];
      for (let n = Math.max(after + 1, seq - HISTORY + 1, 1); n <= seq; n++) out.push(history[n % HISTORY]);
      return out;
    },
  };
}

export type EventLog = ReturnType<typeof createEventLog>;
