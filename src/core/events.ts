import mitt, { type Emitter, type Handler, type WildcardHandler } from 'mitt';
import type { ChannelError } from '../errors/ChannelError.js';
import type { TokenProviderError } from '../errors/TokenProviderError.js';
import type { UnauthorizedError } from '../errors/UnauthorizedError.js';
import type { TokenReason } from './types.js';
import { isolated } from '../shared/report.js';

/** Which request an event belongs to. No event ever carries a token. */
export interface RequestRef {
  /** Numbers the client's requests 1, 2, 3...: every event of one call carries the same id. */
  requestId: number;
  /** Upper-case method. */
  method: string;
  /** Full URL. */
  url: string;
}

/** Where a request is; shared by the per-attempt events. */
export interface RequestInfo extends RequestRef {
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
  'auth:failed': RequestRef & { error: UnauthorizedError };
  /** A request failed, whatever the error (also after `auth:failed`, and for a bad option). */
  error: RequestRef & { error: ChannelError };
};

/** The emitter a client uses: a listener that throws affects no other listener and no request. */
export interface Events {
  emit<K extends keyof ClientEvents>(type: K, payload: ClientEvents[K]): void;
  /** Whether anyone listens to `type` (or to everything): a payload need not be built otherwise. */
  heard(type: keyof ClientEvents): boolean;
  on: Emitter<ClientEvents>['on'];
  off: Emitter<ClientEvents>['off'];
}

export function createEvents(): Events {
  const emitter = mitt<ClientEvents>();
  // Each listener on its own (mitt's emit stops at the first that throws): a throw surfaces as an
  // uncaught error, as in any event emitter, without failing the request.
  const run = isolated;
  return {
    emit(type, payload) {
      const own = emitter.all.get(type) as Handler<unknown>[] | undefined;
      const all = emitter.all.get('*') as WildcardHandler<ClientEvents>[] | undefined;
      if (own) for (const listener of own.slice()) run(() => listener(payload));
      if (all) for (const listener of all.slice()) run(() => listener(type, payload));
    },
    heard(type) {
      const own = emitter.all.get(type);
      const all = emitter.all.get('*');
      return !!((own && own.length) || (all && all.length));
    },
    on: emitter.on,
    off: emitter.off,
  };
}
