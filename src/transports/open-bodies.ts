import { abortError, cleared } from '../core/request-abort.js';
import type { SignalLike } from '../core/types.js';

/** The response bodies of one client that may still be arriving after their call resolved. */
export interface OpenBodies {
  /**
   * Keeps the body of `response` (its connection: `controller`) within the fence's reach while
   * anyone can still read it; `given`, the caller's signal, stops it too where the fetch could not
   * follow it (no AbortSignal.any).
   */
  hold(response: Response, controller: AbortController, context: { method: string; url: string }, given?: AbortSignal): void;
  /** Ends every body still arriving with clearToken()'s AbortError (a logout, another user). */
  fence(): void;
}

/**
 * The bodies of `client.fetch`'s Responses and of raw downloads, which their callers read after
 * the call resolved (server-sent events, a large file): the client's fence must reach them, not
 * only the calls under way. Held weakly, by the body stream, which whoever reads it holds: a body
 * read to its end or dropped is forgotten with it, and a long session holds nothing per request.
 */
export function createOpenBodies(): OpenBodies {
  const open = new Set<WeakRef<ReadableStream>>();
  // Each body's end: aborts its connection (the stream then fails with the reason).
  const ends = new WeakMap<ReadableStream, (reason: unknown) => void>();
  const gone = new FinalizationRegistry<() => void>((forget) => forget());
  return {
    hold(response, controller, context, given) {
      const body = response.body;
      if (!body) return;
      const ref = new WeakRef(body);
      open.add(ref);
      ends.set(body, (reason) => controller.abort(reason === cleared ? abortError({ reason } as SignalLike, context) : reason));
      const follow = given && !AbortSignal.any ? () => end(ref, given.reason) : undefined;
      if (follow) (given as AbortSignal).addEventListener('abort', follow);
      gone.register(body, () => {
        open.delete(ref);
        if (follow) (given as AbortSignal).removeEventListener('abort', follow);
      });
    },
    fence() {
      open.forEach((ref) => end(ref, cleared));
      open.clear();
    },
  };

  function end(ref: WeakRef<ReadableStream>, reason: unknown): void {
    const body = ref.deref();
    const stop = body && ends.get(body);
    if (stop) stop(reason);
  }
}
