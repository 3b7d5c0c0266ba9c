// The service's webhook signature header, in a module of its own so that the checks and the CLI
// (dist/check.cjs, which must not bundle the verifier's zod) name the same constant as the helpers.

/** The header the service signs pushes in: HMAC-SHA256 of the raw body, hex. */
export const SIGNATURE_HEADER = 'x-channel-webhook-signature';
