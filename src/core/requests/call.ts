import type { Stop } from '../cancel.js';
import type { CallKind } from '../platform.js';
import type { Monotonic } from './progress.js';
import type { RetryPolicy } from './retry.js';
import type { StandardSchemaV1 } from '../standard-schema.js';
import type { FileSpec, SignalLike, Transport } from '../types.js';

/** A call as the client's front received it, numbered and given its Stop: what prepare() reads. */
export interface CallInput {
  kind: CallKind;
  /** The method of get(), post()...: their options may not name another. */
  helper?: string;
  path: string;
  /** The call's options as the caller passed them, unchecked. */
  options: Record<string, unknown>;
  requestId: number;
  stop: Stop;
}

/**
 * One call down the request spine, built once by prepare() (call-options.ts) before a token is
 * asked for or anything is sent: what its options say, checked, and what this run adds. Each
 * stage takes it whole: send() (client.ts), the attempt loop (attempts.ts), the shared GETs
 * (dedupe-gets.ts) and settle().
 */
export interface Call {
  // What the options say, checked.
  readonly kind: CallKind;
  readonly method: string;
  readonly url: string;
  /** `method` and `url`, as this call's errors carry them. */
  readonly context: { method: string; url: string };
  /** Lower-case names; the token is added per attempt, never here. */
  readonly headers: Record<string, string>;
  /** Sent as it is by every attempt: a string, or a native call's own body. */
  readonly body?: unknown;
  /** Resolve to the body as it came, without the envelope check. */
  readonly raw: boolean;
  readonly schema?: StandardSchemaV1<unknown, unknown>;
  /** The caller's own signal: it fires `stop`. */
  readonly given?: SignalLike;
  /** Milliseconds each attempt may take. */
  readonly timeout: number;
  readonly policy: RetryPolicy;
  /** Milliseconds the call may wait for the network before it is sent (`offline`); 0: it fails at once. */
  readonly offlineWait: number;
  /** A file call's file: what to send, or where to write. */
  readonly file?: FileSpec;
  readonly hostOptions?: Record<string, unknown>;
  /** A native call's own options, passed on to the transport untouched. */
  readonly passOn?: Record<string, unknown>;
  /** What sends its attempts: the platform's transport, or for a native call the platform's own for those. */
  readonly transport: Transport;

  // This run.
  /** Numbers the call's events. */
  readonly requestId: number;
  /** The call's own signal: fired by `given` and by the clearToken() fence; every stage checks it. */
  readonly stop: Stop;
  /**
   * Whether the transport drops a connection under way when `stop` fires
   * (`TransportRequest.dropOnAbort`): with the caller's signal, and for a file call.
   */
  readonly dropOnAbort: boolean;
  /** The caller's `onProgress` as the caller sees it (progress.ts); the transport reports to `report`. */
  readonly progress?: Monotonic;
  /** Local ms at which the call first waited for the network: `offlineWait` counts from there (pacing.ts). */
  waitedSince?: number;
}
