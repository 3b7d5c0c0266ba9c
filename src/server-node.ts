/**
 * channel-sdk/server on Node (node:crypto).
 * The `node` export condition selects this file: node:crypto is faster than Web Crypto on Node.
 * @packageDocumentation
 */
import { nodeCrypto } from './server/crypto/node.js';
import { serverApi } from './server/api.js';

// Same exports as src/server.ts, whose JSDoc and .d.ts serve both builds.
export const {
  verifyWebhookSignature,
  signWebhookBody,
  parseWebhook,
  dedupKey,
  createWebhookHandler,
  createTokenExchange,
  referenceSign,
  createRedisTokenCache,
  createRedisInbox,
} = serverApi(nodeCrypto);

export * from './server/exports.js';
