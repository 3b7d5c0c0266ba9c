import mitt, { type Emitter } from 'mitt';
import type { ChannelError } from '../errors/ChannelError.js';
import type { TokenProviderError } from '../errors/TokenProviderError.js';
import type { UnauthorizedError } from '../errors/UnauthorizedError.js';
import type { TokenReason } from './types.js';

/** Where a request is; shared by the request events. No event ever carries a token. */
export interface RequestInfo {
  /** Upper-case method. */
  method: string;
  /** Full URL. */
  url: string;
  /** 1 for the first attempt; a retry or the replay after a 401 counts up. */
  attempt: number;
}

/** Every event a client emits, by name. */
export type ClientEvents = {
  /** A new token was obtained from `tokenProvider`. */
  token: {
    reason: TokenReason;
    /** Grows by one per token, so listeners can tell tokens apart without seeing them. */
    version: number;
    /** Local epoch ms at which the token is treated as expired; undefined when unknown. */
    expiresAt?: number;
  };
  /** `tokenProvider` failed; the request that needed the token fails with the same error. */
  'token:error': { reason: TokenReason; error: TokenProviderError };
  /** An attempt is about to be sent. */
  request: RequestInfo;
  /** An attempt got a response (any status). */
  response: RequestInfo & { status: number; durationMs: number };
  /** An attempt got HTTP 401. */
  unauthorized: RequestInfo & { tokenVersion: number };
  /** Another attempt follows: after a 401 (`unauthorized`) or a transient failure. */
  retry: RequestInfo & { reason: 'unauthorized' | 'network' | 'timeout' | 'status'; status?: number; delayMs: number };
  /** The replay after a forced refresh got 401 too; the request fails with `error`. */
  'auth:failed': { method: string; url: string; error: UnauthorizedError };
  /** A request failed (any error, including `auth:failed` ones). */
  error: { method: string; url: string; error: ChannelError };
};

/** The emitter a client uses: a listener that throws cannot break a request. */
export interface Events {
  emit<K extends keyof ClientEvents>(type: K, payload: ClientEvents[K]): void;
  on: Emitter<ClientEvents>['on'];
  off: Emitter<ClientEvents>['off'];
}

export function createEvents(): Events {
  const emitter = mitt<ClientEvents>();
  return {
    emit(type, payload) {
      try {
        emitter.emit(type, payload);
      } catch (error) {
        // A listener's bug surfaces as an uncaught error, as in any event emitter, without failing the request.
        setTimeout(() => {
          throw error;
        });
      }
    },
    on: emitter.on,
    off: emitter.off,
  };
}
