/** A token endpoint on node:http for the exchange's tests: checks the four headers and the reference signature. */
import { afterEach } from 'vitest';
import { nodeCrypto } from '../../../src/server/crypto/node.js';
import { verifyReferenceSignature } from '../../../src/server/tokens/signing.js';
import { makeJwt } from '../../helpers/fake-service.js';
import { sendJson, startServer, type TestServer } from '../../helpers/server.js';

export const accessKey = 'ak_test';
export const secretKey = 'sk_test_very_secret';
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

export interface EndpointOptions {
  delayMs?: number;
  /** Accept any access key and signature (for tests about keys, not signing). */
  anyKey?: boolean;
  /** [status, JSON body] to answer instead of a fresh 900-second token. */
  answer?: (body: { external_user_id: string }) => [number, unknown];
}

/** Starts the endpoint; `calls` lists each request's user and the signature problem, if any. Closed after each test. */
export async function endpoint(options: EndpointOptions = {}) {
  const calls: Array<{ user: string; reason?: string }> = [];
  const server = await startServer(async (req, res) => {
    const reason = await verifyReferenceSignature(nodeCrypto, {
      method: req.method ?? '',
      path: req.url ?? '',
      body: req.body,
      headers: {
        key: req.headers['x-channel-key'] as string,
        timestamp: req.headers['x-channel-timestamp'] as string,
        nonce: req.headers['x-channel-nonce'] as string,
        signature: req.headers['x-channel-signature'] as string,
      },
      secretKeyFor: (key) => (key === accessKey ? secretKey : undefined),
    });
    const body = JSON.parse(req.body || '{}');
    calls.push({ user: body.external_user_id, reason });
    if (req.headers['content-type'] !== 'application/json') return sendJson(res, 400, { code: 400, message: 'content-type' });
    if (reason && !options.anyKey) return sendJson(res, 401, { code: 40101, message: reason });
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    const [status, answer] = options.answer
      ? options.answer(body)
      : [200, { code: 0, data: { access_token: makeJwt({ sub: body.external_user_id, n: calls.length }), expires_in: 900, token_type: 'Bearer' } }];
    sendJson(res, status, answer);
  });
  servers.push(server);
  return { url: server.url, calls };
}
