// The options of the app's life and the network (issue #45): what calls do offline, and the retry
// budget. Their checks are pacing.ts's and retry-budget.ts's; types.ts re-exports them.

/**
 * What calls do while the host (or the browser) reports no network: nothing is sent and
 * `tokenProvider` is not asked; calls of `methods` wait for it, the others fail at once with
 * `NetworkError` whose `offline` is true. README "The app's life and the network".
 * @example offline: { wait: 10000 }
 */
export interface OfflineOptions {
  /**
   * Milliseconds a call not sent yet may wait for the network, counted from its first wait; past
   * it the call fails with `NetworkError` whose `offline` is true. `0`: no call waits. @default 30000
   */
  wait?: number;
  /**
   * Methods whose calls wait; the others (writes, by default) fail at once while offline with
   * `NetworkError` whose `offline` is true. @default the `retry` methods: GET, HEAD, PUT, DELETE, OPTIONS
   */
  methods?: string[];
}

/**
 * The retry budget of a client: retries of transient failures draw on one balance that answers
 * refill (gRPC's retry throttling, Envoy's retry budgets), so that an outage sees at most `max`
 * retries more than the calls themselves. The replay after a 401 never draws on it; a
 * `Retry-After` (up to `retry.maxRetryAfter`) is honoured even from a spent budget.
 */
export interface RetryBudgetOptions {
  /**
   * Retries the client may spend with no answer in between: the budget starts full and never
   * holds more. During an outage this is all the extra load the client adds. @default 10
   */
  max?: number;
  /**
   * What each answer that is not a transient failure (a status outside `retry.statusCodes`)
   * puts back: `0.1` buys one retry per 10 answers. @default 0.1
   */
  ratio?: number;
}
