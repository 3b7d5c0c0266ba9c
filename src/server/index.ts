// Binds the server helpers to one crypto implementation; src/server.ts (Web Crypto) and
// src/server-node.ts (node:crypto) are the thin entries over it.
import type { Crypto } from './crypto.js';
import { createHandlerFactory } from './handler.js';
import { createReferenceSigning } from './signing.js';
import { createTokenExchangeFactory } from './token-exchange.js';
import { createWebhookTools } from './webhook.js';

export function bindServer(crypto: Crypto) {
  const webhook = createWebhookTools(crypto);
  const signing = createReferenceSigning(crypto);
  return {
    ...webhook,
    ...signing,
    createWebhookHandler: createHandlerFactory(crypto),
    createTokenExchange: createTokenExchangeFactory(signing.referenceSign),
  };
}
