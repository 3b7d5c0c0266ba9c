// The service's `{ code, message | msg, data }` envelope, read the same way by the client and
// the token exchange.

/** The envelope: a parsed answer with a `code` (whatever its value). */
export interface Envelope {
  code: unknown;
  data?: unknown;
  message?: unknown;
  msg?: unknown;
}

export function isEnvelope(value: unknown): value is Envelope {
  return typeof value === 'object' && value !== null && 'code' in value;
}

/** What an answer says: its `message`, else its `msg`, when text; else ''. Any value is read (an object without `code` too). */
export function envelopeText(value: unknown): string {
  const o = (value || {}) as { message?: unknown; msg?: unknown };
  return typeof o.message === 'string' ? o.message : typeof o.msg === 'string' ? o.msg : '';
}
