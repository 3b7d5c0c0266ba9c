/**
 * channel-sdk/server on Web Crypto: Deno, Bun, Cloudflare Workers, Vercel Edge.
 * Node gets src/server-node.ts through the `node` export condition (node:crypto is faster there).
 * @packageDocumentation
 */
import { webCrypto } from './server/crypto-web.js';
import { bindServer } from './server/index.js';

// The functions carry their own JSDoc (src/server/webhook.ts, handler.ts, token-exchange.ts, signing.ts).
export const { verifyWebhookSignature, signWebhookBody, parseWebhook, dedupKey, createWebhookHandler, createTokenExchange, referenceSign } =
  bindServer(webCrypto);

export * from './server/exports.js';
