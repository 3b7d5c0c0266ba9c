/**
 * channel-sdk/testing: a local emulation of the service for demos and partners' own test suites, and an
 * in-process mini-program host for the unit tests of their pages.
 * @packageDocumentation
 */
export { startSandbox, SANDBOX_CODES, SANDBOX_PATHS } from './testing/sandbox/sandbox.js';
// The sandbox's types, one line: its option, event, push and token shapes.
export type {
  FailNextOptions,
  PushOptions,
  PushRecord,
  PushResult,
  Sandbox,
  SandboxEvent,
  SandboxEventBody,
  SandboxOptions,
  SandboxStats,
  TokenClaims,
  TokenVerdict,
} from './testing/sandbox/types.js';
export type { SandboxOrder } from './testing/sandbox/orders.js';
export { demoLogistics } from './testing/sandbox/demo-data.js';
export { checkTokenRoute, checkWebhook, formatCheckReport } from './testing/check/checks.js';
export type { TokenRouteCheckOptions } from './testing/check/check-token-route.js';
export type { WebhookCheckOptions } from './testing/check/check-webhook.js';
export type { CheckReport, CheckResult, CheckStatus } from './testing/check/check-report.js';
// createMockHost: an in-process mini-program host for partners' page tests (issue #35).
export { createMockHost } from './testing/mock-host/mock-host.js';
export type {
  MockAnswer,
  MockCall,
  MockFileSystem,
  MockHost,
  MockHostKind,
  MockHostOptions,
  MockHostStats,
  MockRequest,
  MockRoute,
} from './testing/mock-host/types.js';
export type { SandboxPhoto } from './testing/sandbox/file-routes.js';
