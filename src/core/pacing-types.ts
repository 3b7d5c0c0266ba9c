// The options of the app's life and the network (issue #45): what calls do offline. Their checks
// are pacing.ts's; types.ts re-exports them.

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
