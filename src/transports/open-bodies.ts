import { abortError, cleared } from '../core/requests/request-abort.js';
import type { SignalLike } from '../core/types.js';

/** The response bodies of one client that may still be arriving after their call resolved. */
export interface OpenBodies {
  /**
   * Keeps the body of `response` (its connection: `controller`) within the fence's reach while
   * anyone can still read it; `given`, the caller's signal, stops it too where the fetch could not
   * follow it (no AbortSignal.any).
   */
  hold(response: Response, controller: AbortController, context: { method: string; url: string }, given?: AbortSignal): void;
  /**
   * Ends every body still arriving with clearToken()'s AbortError (a logout, another user), and
   * names to `refuse` the caller's signal of each: a stack that retries the failed read (TanStack
   * Query's `retry`) calls again with it, and that call is refused as one the fence ended.
   */
  fence(refuse: (given: AbortSignal) => void): void;
}

/** A body held: the stream (weakly), how to end it, the caller's signal, and how to stop following it. */
interface Open {
  body: WeakRef<ReadableStream>;
  end(reason: unknown): void;
  given?: AbortSignal;
  off?: () => void;
}

/**
 * The bodies of `client.fetch`'s Responses and of raw downloads, which their callers read after
 * the call resolved (server-sent events, a large file): the client's fence must reach them, not
 * only the calls under way. Each is held weakly, by its body stream, which whoever reads it holds:
 * a body read to its end or dropped is forgotten with it. The list is swept of those whenever it
 * has doubled (constant time per response), so a long session holds nothing per request.
 */
export function createOpenBodies(): OpenBodies {
  let open: Open[] = [];
  let limit = 64;
  const gone = (entry: Open) => !entry.body.deref() && (entry.off && entry.off(), true);
  return {
    hold(response, controller, context, given) {
      const body = response.body;
      if (!body) return;
      const entry: Open = {
        body: new WeakRef(body),
        // Aborting the connection fails the stream's next read with the reason.
        end: (reason) => controller.abort(reason === cleared ? abortError({ reason } as SignalLike, context) : reason),
        given,
      };
      if (given && !AbortSignal.any) {
        const follow = () => entry.body.deref() && entry.end(given.reason);
        given.addEventListener('abort', follow);
        entry.off = () => given.removeEventListener('abort', follow);
      }
      if (open.push(entry) > limit) {
        open = open.filter((e) => !gone(e));
        limit = 2 * open.length + 64;
      }
    },
    fence(refuse) {
      const ended = open;
      open = [];
      ended.forEach((entry) => gone(entry) || (entry.end(cleared), entry.off && entry.off(), entry.given && refuse(entry.given)));
    },
  };
}
