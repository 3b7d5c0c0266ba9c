// The beforeSend hook's types (client option of both entries); its runner is before-send.ts.

/** One attempt as `beforeSend` sees it, just before it is sent. */
export interface SendAttempt {
  /** Upper-case method. */
  readonly method: string;
  /** The full URL as sent, query included. */
  readonly url: string;
  /**
   * The headers as sent, lower-case names, without `Authorization` (added after this hook, and
   * never shown to it). Add or change them here, string values only; setting `authorization`
   * in any case is a ConfigError.
   */
  headers: Record<string, string>;
  /**
   * The body as sent: a string for `request()` and its helpers (JSON already serialised), the
   * caller's own for `client.fetch` (a BodyInit) and `client.hostRequest` (its data); undefined
   * without one and for files. Replace it (e.g. with its encryption): each attempt starts again
   * from the call's own body and headers.
   */
  body: unknown;
  /** 1 for the first attempt; the replay after a 401 and each retry count up. */
  readonly attempt: number;
  /** The call's number, as its events carry it. */
  readonly requestId: number;
}

/**
 * A hook run just before every attempt is sent, the replay after a 401 and each retry included:
 * request signing, payload encryption, trace headers. Change `attempt.headers` and
 * `attempt.body`; return nothing, or a promise of nothing (the attempt waits for it). What it
 * throws fails the call with a ConfigError, nothing sent.
 */
export type BeforeSend = (attempt: SendAttempt) => void | Promise<void>;
