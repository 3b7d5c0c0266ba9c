/**
 * channel-sdk/testing: a local emulation of the service for demos and partners' own test suites.
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
