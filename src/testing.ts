/**
 * channel-sdk/testing: a local emulation of the service for demos and partners' own test suites.
 * @packageDocumentation
 */
export { startSandbox, SANDBOX_CODES, SANDBOX_PATHS } from './testing/sandbox.js';
export type { PushRecord, PushResult, Sandbox, SandboxEvent, SandboxOptions, SandboxStats } from './testing/sandbox.js';
export { demoLogistics } from './testing/demo-data.js';
