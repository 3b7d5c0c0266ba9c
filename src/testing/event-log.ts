import type { SandboxEvent, SandboxEventBody } from './types.js';

/** How many past events a new `GET /__sandbox/events` client can ask for (`Last-Event-ID`). */
const HISTORY = 1000;

/** The sandbox's events: numbered, timed, kept for late subscribers, handed to every listener. */
export function createEventLog(clock: () => number) {
  const history: SandboxEvent[] = [];
  const subscribers = new Set<(event: SandboxEvent) => void>();
  let seq = 0;

  return {
    emit(body: SandboxEventBody): SandboxEvent {
      const event = { ...body, seq: ++seq, at: clock() } as SandboxEvent;
      history.push(event);
      if (history.length > HISTORY) history.shift();
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
    since: (after: number): SandboxEvent[] => history.filter((event) => event.seq > after),
  };
}

export type EventLog = ReturnType<typeof createEventLog>;
