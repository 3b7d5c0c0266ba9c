/**
 * channel-sdk/server on Web Crypto: Deno, Bun, Cloudflare Workers, Vercel Edge.
 * Node gets src/server-node.ts through the `node` export condition (node:crypto is faster there).
 * @packageDocumentation
 */
import { webCrypto } from './server/crypto/web.js';
import { serverApi } from './server/api.js';

// The package's server types come from this file alone (package.json maps both the node and
// the default condition to dist/server.d.ts), so the public JSDoc lives here.
const server = serverApi(webCrypto);

/**
 * True when `signature` is the hex HMAC-SHA256 of `rawBody` under `secret` (either case), or
 * under any secret of a list (`[current, previous]` while rotating). Never throws: any malformed input (a missing or non-hex signature, an empty secret,
 * a body that is not bytes or text) is `false`.
 * @example
 * const ok = await verifyWebhookSignature(rawBody, request.headers.get(SIGNATURE_HEADER), secret);
 */
export const verifyWebhookSignature = server.verifyWebhookSignature;

/** Lower-case hex HMAC-SHA256 of the body, as the service sends it (for tests and tools). */
export const signWebhookBody = server.signWebhookBody;

/**
 * Verifies, then parses and validates a push. Resolves to a {@link WebhookEvent}: narrow it on
 * `event` (`logistics.updated` carries `logistics`; another event type comes as received).
 * Throws `WebhookSignatureError` or `WebhookPayloadError`.
 * @example
 * const event = await parseWebhook({ body: rawBody, headers: request.headers, secret });
 * if (event.event === 'logistics.updated') await save(event.logistics); // Logistics
 */
export const parseWebhook = server.parseWebhook;

/**
 * A key that is the same for byte-identical bodies: the hex SHA-256 of the raw body.
 * Pushes carry no id, so use it to skip a body you have already processed.
 */
export const dedupKey = server.dedupKey;

/**
 * The webhook route: verifies the signature over the raw body, parses, validates, then calls
 * your callback, and answers 200 only after it succeeded; 401 bad or missing signature, 400 bad
 * JSON or shape, 405 not POST, 408 body not in within `bodyTimeoutMs`, 413 too large, 500 the
 * callback threw or no secret is configured, 503 + Retry-After when bodies in flight fill
 * `maxBufferedBytes` or (with `dedup`) another delivery of the push is running. It never rejects: a body another middleware already read gets a 500 saying what to change for
 * the framework in use. It is a Fetch handler (`(request) => Promise<Response>`: Next.js App
 * Router, Deno, Bun, workers; Hono's context works too); `toNodeHandler(handler)` serves it on
 * node:http, Express, Next.js Pages Router, Koa and Fastify without building a Fetch Request.
 * @example
 * const webhook = createWebhookHandler({
 *   secret: () => process.env.CHANNEL_WEBHOOK_SECRET, // read at the first push
 *   onLogisticsUpdated: async ({ logistics }) => save(logistics),
 * });
 * export const POST = webhook;                            // Next.js App Router
 * app.post('/webhooks/channel', toNodeHandler(webhook));  // Express, before express.json()
 */
export const createWebhookHandler = server.createWebhookHandler;

/**
 * Exchanges your own user ids for user JWTs at `POST {baseUrl}/open/api/v1/sdk/tokens`.
 * @example
 * const exchange = createTokenExchange({ baseUrl, accessKey, secretKey });
 * app.get('/channel-token', async (req, res) => {
 *   const { accessToken } = await exchange.getToken(req.user.id, { forceRefresh: req.query.force === '1' });
 *   res.json({ access_token: accessToken });
 * });
 */
export const createTokenExchange = server.createTokenExchange;

/**
 * The reference scheme shared with the sandbox: HMAC-SHA256 (secret key, UTF-8) over
 * `METHOD\nPATH\nACCESS_KEY\nTIMESTAMP\nNONCE\nhex(SHA-256(body))`, lower-case hex;
 * timestamp in whole Unix seconds; nonce 32 lower-case hex characters.
 */
export const referenceSign = server.referenceSign;

/**
 * A {@link TokenCache} on your Redis, shared by every instance of your backend: tokens are kept
 * with a TTL (`SET … PX`), and a short lock (`SET … NX PX`, renewed while its owner's token call
 * runs, released only by its owner) makes one instance call the token endpoint for a user while
 * the others wait for its token. An ioredis client may be passed before it is ready: the first
 * calls wait for its first connection (up to 2 s).
 * Attach an `error` listener to your client; while it is disconnected the exchange asks the
 * service directly.
 * @example
 * import Redis from 'ioredis'; // or: import { createClient } from 'redis'
 * const redis = new Redis(process.env.REDIS_URL);
 * const exchange = createTokenExchange({ baseUrl, accessKey, secretKey, cache: createRedisTokenCache(redis) });
 */
export const createRedisTokenCache = server.createRedisTokenCache;

/**
 * A durable webhook inbox on your Redis (Redis Streams with a consumer group), through your own
 * ioredis or node-redis client, a Redis Cluster client included. Pass it to
 * `createWebhookHandler({ secret, inbox })`: each verified push is stored, then answered 2xx at
 * once. Run `inbox.process({ onLogisticsUpdated })` in one or many worker processes: each push
 * runs at least once (a worker that dies mid-callback leaves it to another after `leaseMs`), one
 * at a time per order, never after a newer snapshot of its order, with retries and backoff, and is
 * put aside as a dead letter after `maxAttempts`. A repeat of a stored push is acknowledged and
 * not run again. Run Redis with persistence (`appendonly yes`): what Redis forgets is lost.
 * @example
 * const inbox = createRedisInbox(redis, { prefix: 'myapp:' });
 * app.post('/webhooks/channel', toNodeHandler(createWebhookHandler({ secret, inbox })));
 * const worker = inbox.process({ onLogisticsUpdated: async ({ logistics }) => save(logistics), concurrency: 4 });
 * process.on('SIGTERM', () => worker.close().then(() => process.exit(0)));
 */
export const createRedisInbox = server.createRedisInbox;

export * from './server/exports.js';
