// The token store's contract: what a `tokenStore` keeps, and the calls the client makes on it.

/** What a {@link TokenStore} keeps: the token with its receipt time and end, in epoch ms of the device clock. */
export interface StoredToken {
  token: string;
  receivedAt: number;
  expiresAt: number;
  /** The store's key() when the token was asked for: whose token it is. Set when the store has key(); keep it and give it back. */
  key?: string;
  /** The client's `baseUrl`: the service the token is for. Always set; keep it and give it back (a record without it is not restored). */
  service?: string;
}

/**
 * Keeps the token across relaunches (opt-in; see the README on what persisting a token
 * means). Sync or async; a store that fails never fails a request. Calls are made one at a
 * time: a `remove()` runs after the `set()` under way and cancels any not yet started.
 */
export interface TokenStore {
  /**
   * The saved token for `service` (the client's `baseUrl`), or null/undefined when there is none.
   * A record is restored only for the service and the user it was saved for.
   */
  get(service: string): StoredToken | null | undefined | Promise<StoredToken | null | undefined>;
  /** Saves the token of `value.service`. */
  set(value: StoredToken): void | Promise<void>;
  /** Called by clearToken(): forgets the token of `service`. */
  remove(service: string): void | Promise<void>;
  /**
   * Whose token it is: the signed-in user's id, or null/undefined when nobody is (read when a
   * provider call starts and before every request, so keep it quick). With it a token is saved
   * with the key it was asked for under and restored only under that key, and a new key ends
   * the session like clearToken() (requests under way fail with AbortError; the record stays
   * for its user). Without it the store keeps nothing more once clearToken() ran: it could
   * not tell the next user's token from the last one's. `hostTokenStore({ key: () => userId })` has it.
   */
  key?(): string | null | undefined;
}
