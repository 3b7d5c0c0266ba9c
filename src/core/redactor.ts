// Every text an error or event keeps from a response or a provider failure passes through
// here first, so a gateway that echoes the credential cannot put it in an error.

import { MASK, maskTokens } from '../shared/redact.js';

export interface Redactor {
  /** Adds a token to the ones always cut out (the client calls it for every token it holds). */
  remember(token: string): void;
  /**
   * The text with every remembered token (also its `payload.signature` or its signature alone,
   * each also folded over lines) and every JWT-shaped run replaced by `[token]`.
   */
  text(text: string): string;
  /** A deep copy of parsed JSON with every string redacted. */
  value(value: unknown): unknown;
  /**
   * A thrown value to keep as an error's `cause`: itself when it holds no token, else a
   * plain Error copy (same name, redacted message and stack, redacted cause).
   */
  cause(thrown: unknown): unknown;
}

/** What a re-formatting may put between two characters of an echoed token: whitespace (a line folded), or a JSON escape of it. */
const FOLD = '(?:\\s|\\\\[nrt])*';

/** `text` as a pattern that also matches it folded anywhere. */
const folded = (text: string) =>
  text
    .split('')
    .map((c) => c.replace(/[^\w-]/, '\\$&'))
    .join(FOLD);

/**
 * A remembered token's pattern: the token, its `payload.signature` (with the constant HS256 header,
 * that part is the credential) or its signature alone (unless short), each also folded over lines.
 * A token of another shape is matched whole (folded too).
 */
function tokenPattern(token: string): RegExp {
  const [header, payload, signature, extra] = token.split('.');
  const dot = FOLD + '\\.' + FOLD;
  return new RegExp(
    signature === undefined || extra !== undefined
      ? folded(token)
      : '(?:' + folded(header) + dot + ')?' + (signature.length < 16 ? folded(payload) + dot : '(?:' + folded(payload) + dot + ')?') + folded(signature),
    'g',
  );
}

export function createRedactor(): Redactor {
  const tokens: string[] = [];
  const patterns: RegExp[] = [];
  const text = (input: string) => {
    let out = input;
    for (const pattern of patterns) out = out.replace(pattern, MASK);
    return maskTokens(out);
  };
  const value = (input: unknown, depth = 0): unknown => {
    if (typeof input === 'string') return text(input);
    if (typeof input !== 'object' || input === null) return input;
    if (depth > 32) return MASK;
    if (Array.isArray(input)) return input.map((item) => value(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(input)) out[text(key)] = value((input as Record<string, unknown>)[key], depth + 1);
    return out;
  };
  const cause = (thrown: unknown, depth = 0): unknown => {
    try {
      if (!(thrown instanceof Error)) return typeof thrown === 'string' ? text(thrown) : thrown;
      const own = (thrown as { cause?: unknown }).cause;
      const inner = depth < 4 ? cause(own, depth + 1) : undefined;
      const stack = thrown.stack || '';
      if (text(thrown.message) === thrown.message && text(stack) === stack && inner === own) return thrown;
      const copy = new Error(text(thrown.message));
      copy.name = thrown.name;
      copy.stack = text(stack);
      if (inner !== undefined) (copy as { cause?: unknown }).cause = inner;
      return copy;
    } catch {
      return undefined; // a value that throws when read (a revoked Proxy, a throwing getter): no cause kept
    }
  };
  return {
    cause,
    remember(token) {
      // The newest first; a long session keeps the last 32 (tokens are short-lived anyway).
      if (!token || tokens.indexOf(token) >= 0) return;
      tokens.unshift(token);
      patterns.unshift(tokenPattern(token));
      if (tokens.length > 32) {
        tokens.pop();
        patterns.pop();
      }
    },
    text,
    value,
  };
}
