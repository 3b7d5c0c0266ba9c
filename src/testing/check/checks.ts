// `channel-sandbox check` as one module: built once, as dist/check.cjs, which the testing entry
// (ESM and CommonJS) and the CLI all load, so its code ships once and without a source map
// (rollup.config.mjs; the install budget: test:consumers).
export { checkTokenRoute } from './check-token-route.js';
export { checkWebhook } from './check-webhook.js';
export { formatCheckReport } from './check-report.js';
// `channel-sandbox doctor`: only the CLI runs it, so it lives here, built once.
export { formatDoctorReport, runDoctor } from './doctor.js';
