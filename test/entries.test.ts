/**
 * The public surface, chosen on purpose (issue #31): every name each entry exports, values and
 * types, read from the source entries with the TypeScript API. A name added or removed fails
 * here until this list says so: an addition is a decision, made with its reason in the group's
 * comment. (test/package checks that the built .d.ts files export the same.)
 */
import { entries, exportsOf, programOf } from './helpers/exports.js';
import { describe, expect, test } from 'vitest';

/** Both client entries: the client's options, calls, events, token contract and errors. */
const client = [
  // createClient and its option and call types (each entry narrows Client and the file options).
  'createClient',
  'BaseClient (type)',
  'Client (type)',
  'CoreClientOptions (type)',
  'RequestOptions (type)',
  'MethodOptions (type)',
  'SearchParams (type)',
  'RetryOptions (type)',
  // What calls do offline, and the retry budget (issue #45).
  'OfflineOptions (type)',
  'RetryBudgetOptions (type)',
  'FileCallOptions (type)',
  'HeadersInput (type)',
  'UploadFields (type)',
  'UploadOptions (type)',
  'DownloadOptions (type)',
  'Progress (type)',
  // The schema option takes any Standard Schema; its type is vendored (no dependency).
  'StandardSchemaV1 (type)',
  // The tokenProvider contract, and the opt-in token store a partner may implement.
  'TokenProvider (type)',
  'TokenProviderContext (type)',
  'TokenReason (type)',
  'TokenStore (type)',
  'StoredToken (type)',
  // Cancelling where the host has no AbortController; the signal option's shape.
  'createCancelToken',
  'CancelToken (type)',
  'SignalLike (type)',
  // Under a stack of the partner's own (issue #32): whether an error is worth their own retry
  // (TanStack Query's `retry`), and the per-attempt hook with what it sees.
  'isRetryable',
  'BeforeSend (type)',
  'SendAttempt (type)',
  // OpenTelemetry (issue #34): the telemetry option's shape, a Tracer and a Meter typed structurally (no dependency);
  // the option takes the plug-in of channel-sdk/telemetry (#44), whose type is named here too.
  'TelemetryOptions (type)',
  'ClientTelemetryPlugin (type)',
  // Events (mitt) and their payloads.
  'ClientEvents (type)',
  'RequestInfo (type)',
  // Errors: one class per failure, a cross-realm guard, the code union and an error's context.
  'ChannelError',
  'isChannelError',
  'ConfigError',
  'TokenProviderError',
  'UnauthorizedError',
  'HttpError',
  'ApiError',
  'ResponseError',
  'NetworkError',
  'TimeoutError',
  'AbortError',
  'ChannelErrorCode (type)',
  'ErrorContext (type)',
  'SchemaIssue (type)',
  // Not exported: the transport seam (Transport, TransportRequest, TransportResponse, UploadSpec,
  // DownloadSpec, FileSpec, BlobLike): no option accepts a transport.
];

const expected: Record<keyof typeof entries, string[]> = {
  'channel-sdk': [
    ...client,
    // The browser entry's own options: ky passed through, crossTab.
    'ClientOptions (type)',
    'KyPassThrough (type)',
  ],
  'channel-sdk/miniprogram': [
    ...client,
    'MiniProgramClientOptions (type)',
    'MiniProgramRequestExtra (type)',
    'HostOptions (type)',
    'DownloadResult (type)',
    // The host functions the request/uploadFile/downloadFile options take, and their shapes, for
    // a partner who wraps them (logging, a mock in tests).
    'HostRequest (type)',
    'HostRequestOptions (type)',
    'HostUploadFile (type)',
    'HostUploadOptions (type)',
    'HostDownloadFile (type)',
    'HostDownloadOptions (type)',
    'HostResult (type)',
    'HostHeaders (type)',
    // client.hostRequest (issue #32): wx.request's options, result, fail error and task, for code
    // and libraries written against a host's request() (alova adapters, luch-request, uni/Taro).
    'HostRequestCall (type)',
    'HostRequestResult (type)',
    'HostRequestError (type)',
    'HostRequestTask (type)',
    // The relaunch-proof token store over the host's storage.
    'hostTokenStore',
    'HostStorage (type)',
    'HostTokenStoreOptions (type)',
  ],
  'channel-sdk/server': [
    // Token exchange, its cache (memory, Redis) and signing (the reference scheme is exported so a
    // custom sign can wrap it; the limit so a partner can check ids before calling).
    'createTokenExchange',
    'TokenExchange (type)',
    'TokenExchangeOptions (type)',
    'ExchangedToken (type)',
    'CachedToken (type)', // #31: was StoredToken, the client's name for its own stored token
    'TokenCache (type)',
    'TokenCacheLock (type)',
    'TokenCacheErrorInfo (type)',
    'createMemoryTokenCache',
    'MemoryTokenCacheOptions (type)', // #31 item 5: every constructor takes an options object
    'createRedisTokenCache',
    'RedisTokenCacheOptions (type)',
    'RedisClient (type)',
    'IoRedisClient (type)',
    'NodeRedisClient (type)',
    'referenceSign',
    'SignFunction (type)',
    'SignInput (type)',
    'MAX_EXTERNAL_USER_ID',
    // OpenTelemetry (issue #34): the telemetry option of the exchange, the webhook handler and the inbox.
    'TelemetryOptions (type)',
    // The ready token route.
    'createTokenRoute',
    'TokenRoute (type)',
    'TokenRouteOptions (type)',
    'TokenRouteErrorInfo (type)',
    'TokenSource (type)',
    // Webhooks: verification, parsing, the handler, repeated pushes, snapshot order.
    'verifyWebhookSignature',
    'signWebhookBody',
    'parseWebhook',
    'ParseWebhookInput (type)',
    'dedupKey',
    'SIGNATURE_HEADER',
    'RawBody (type)',
    'Secret (type)',
    'createWebhookHandler',
    'WebhookHandler (type)',
    'WebhookHandlerOptions (type)',
    'WebhookContext (type)',
    'WebhookErrorInfo (type)',
    'WebhookSecret (type)',
    // A secret or [current, previous] while rotating it (issue #33).
    'Secrets (type)',
    // The durable inbox (issue #33): the handler's option, the one-method interface a partner's own
    // queue implements, the Redis Streams inbox with its workers, stats and dead letters.
    'WebhookInboxHandlerOptions (type)',
    'WebhookInbox (type)',
    'InboxPush (type)',
    'InboxAppendResult (type)',
    'createRedisInbox',
    'RedisInbox (type)',
    'RedisInboxOptions (type)',
    'InboxProcessOptions (type)',
    'InboxContext (type)',
    'InboxErrorInfo (type)',
    'InboxWorker (type)',
    'InboxStats (type)',
    'DeadLetter (type)',
    'createMemoryDedupStore',
    'createRedisDedupStore',
    'MemoryDedupStoreOptions (type)',
    'RedisDedupStoreOptions (type)',
    'WebhookDedupStore (type)',
    'DedupLease (type)',
    'DedupState (type)',
    'isLogisticsUpdated',
    'compareLogistics',
    'latestEventTime',
    // The push's types (the zod schemas behind them stay inside: their types were 39 KB of
    // zod-mini's declarations in the shipped .d.ts).
    'WebhookEvent (type)',
    'LogisticsUpdatedEvent (type)',
    'UnknownWebhookEvent (type)',
    'Logistics (type)',
    'Shipment (type)',
    'TrackingEvent (type)',
    // Serving the Fetch handlers on node:http and the frameworks, and the shapes they accept.
    'toNodeHandler',
    'NodeHandler (type)',
    'NodeRequest (type)',
    'FastifyRequestLike (type)',
    'FastifyReplyLike (type)',
    'KoaContextLike (type)',
    'FetchContext (type)',
    'FetchRoute (type)',
    'HeadersLike (type)',
    // Errors.
    'ChannelError',
    'isChannelError',
    'ConfigError',
    'TokenExchangeError',
    'WebhookPayloadError',
    'WebhookSignatureError',
    'ChannelErrorCode (type)',
    // Not exported: TOKEN_PATH (the exchange and the sandbox know it).
  ],
  // The client's telemetry plug-in (#44): its own entry, so that an app that traces nothing carries none of it.
  'channel-sdk/telemetry': [
    'clientTelemetry',
    'ClientTelemetryPlugin (type)',
    // The tracer and meter as the SDK calls them (typed structurally: no OpenTelemetry dependency).
    'TelemetryOptions (type)',
    'TelemetryTracer (type)',
    'TelemetryMeter (type)',
    'TelemetrySpan (type)',
    'TelemetrySpanOptions (type)',
    'TelemetryAttributes (type)',
  ],
  'channel-sdk/testing': [
    'startSandbox',
    'Sandbox (type)',
    'SandboxOptions (type)',
    'SandboxStats (type)',
    'SandboxEvent (type)',
    'SandboxEventBody (type)',
    'SandboxOrder (type)',
    // What the sandbox's photo route (the README's files example) answers (issue #35 item 2).
    'SandboxPhoto (type)',
    'FailNextOptions (type)',
    'PushOptions (type)',
    'PushRecord (type)',
    'PushResult (type)',
    'TokenClaims (type)',
    'TokenVerdict (type)',
    // What the sandbox labels as its own (docs/guide/sandbox.md), and its demo push.
    'SANDBOX_PATHS',
    'SANDBOX_CODES',
    'demoLogistics',
    // `channel-sandbox check` as functions.
    'checkTokenRoute',
    'checkWebhook',
    'formatCheckReport',
    'TokenRouteCheckOptions (type)',
    'WebhookCheckOptions (type)',
    'CheckReport (type)',
    'CheckResult (type)',
    'CheckStatus (type)',
    // createMockHost: an in-process mini-program host for partners' page tests (API.md; issue
    // #35 item 4), its options, routes, answers, recorded calls and file system.
    'createMockHost',
    'MockAnswer (type)',
    'MockCall (type)',
    'MockFileSystem (type)',
    'MockHost (type)',
    'MockHostKind (type)',
    'MockHostOptions (type)',
    'MockHostStats (type)',
    'MockRequest (type)',
    'MockRoute (type)',
    // Not exported: MAX_BODY_BYTES (the sandbox's own limit, documented as a figure).
  ],
};

describe('each entry exports exactly the names chosen for it', () => {
  const program = programOf(Object.values(entries));
  for (const [entry, file] of Object.entries(entries) as Array<[keyof typeof entries, string]>) {
    test(`${entry}`, () => {
      expect(exportsOf(program, file)).toEqual(expected[entry].toSorted());
    });
  }
});
