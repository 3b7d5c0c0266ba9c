/**
 * channel-sdk/testing: a local emulation of the service for demos and partners' own test suites.
 * @packageDocumentation
 */
export { startSandbox, SANDBOX_CODES, SANDBOX_PATHS } from './testing/sandbox.js';
export { MAX_BODY_BYTES } from './testing/http.js';
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
} from './testing/types.js';
export type { SandboxOrder } from './testing/orders.js';
export { demoLogistics } from './testing/demo-data.js';
