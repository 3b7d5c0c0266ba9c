import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeCrypto } from '../../server/crypto/node.js';
import { getHeader } from '../../server/http/headers.js';
import { REFERENCE_WINDOW_SECONDS, verifyReferenceSignature } from '../../server/tokens/signing.js';
import { externalUserIdProblem } from '../../server/tokens/exchange-options.js';
import type { EventLog } from './event-log.js';
import { sendJson } from '../http-io.js';
import { createNonceStore } from './nonce-store.js';
import { SANDBOX_CODES } from './sandbox-api.js';
import type { SandboxStats } from './types.js';

/** What the token endpoint uses of its sandbox. */
export interface TokenEndpointContext {
  stats: SandboxStats;
  events: EventLog;
  credentials: { accessKey: string; secretKey: string };
  now: () => number;
  /** Issues a JWT for the user (counted and logged). */
  issue(externalUserId: string, via: 'endpoint' | 'direct'): string;
  /** The lifetime of the tokens issued now, in seconds (setTokenTtl changes it). */
  ttl(): number;
}

/**
 * The sandbox's token endpoint (`POST` at the service's TOKEN_PATH): the reference signature within its
 * ±300 s window, each nonce once, the body rules; answers a JWT as the service does.
 */
export function createTokenEndpoint({ stats, events, credentials, now, issue, ttl }: TokenEndpointContext) {
  // A nonce must be remembered as long as its timestamp can pass the window: up to 300 s ahead, then 300 s.
  const nonces = createNonceStore(2 * REFERENCE_WINDOW_SECONDS + 1);

  async function tokenEndpoint(req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
    stats.tokenCalls++;
    const reject = (status: number, code: number, reason: string) => {
      stats.tokenRejections++;
      events.emit({ type: 'token', ok: false, status, code, reason });
      sendJson(res, status, { code, message: reason }, status === 405 ? { allow: 'POST' } : {});
    };
    if (req.method !== 'POST') return reject(405, SANDBOX_CODES.methodNotAllowed, 'use POST');
    const header = (name: string) => getHeader(req.headers, name);
    const nowMs = now();
    const reason = await verifyReferenceSignature(nodeCrypto, {
      method: 'POST',
      path: req.url ?? '',
      body,
      nowMs,
      headers: {
        key: header('x-channel-key'),
        timestamp: header('x-channel-timestamp'),
        nonce: header('x-channel-nonce'),
        signature: header('x-channel-signature'),
      },
      secretKeyFor: (key) => (key === credentials.accessKey ? credentials.secretKey : undefined),
    });
    if (reason) {
      const code = /window/.test(reason) ? SANDBOX_CODES.staleTimestamp : /access key/.test(reason) ? SANDBOX_CODES.unknownKey : SANDBOX_CODES.badSignature;
      return reject(401, code, reason);
    }
    if (!nonces.add(header('x-channel-nonce') as string, Math.floor(nowMs / 1000)))
      return reject(401, SANDBOX_CODES.replayedNonce, 'nonce already used within the ±300 s window');
    if (!/^application\/json\b/i.test(header('content-type') ?? '')) return reject(400, SANDBOX_CODES.badRequest, 'Content-Type must be application/json');
    let userId: unknown;
    try {
      userId = (JSON.parse(body.toString('utf8')) as { external_user_id?: unknown } | null)?.external_user_id;
    } catch {
      return reject(400, SANDBOX_CODES.badRequest, 'body is not JSON');
    }
    const problem = externalUserIdProblem(userId);
    if (problem) return reject(400, SANDBOX_CODES.invalidUserId, 'external_user_id ' + problem);
    sendJson(res, 200, { code: 0, data: { access_token: issue(userId as string, 'endpoint'), expires_in: ttl(), token_type: 'Bearer' } });
  }

  return tokenEndpoint;
}
