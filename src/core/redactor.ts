// Every text an error or event keeps from a response or a provider failure passes through
// here first, so a gateway that echoes the credential cannot put it in an error.

import { MASK, maskTokens } from '../shared/redact.js';

export interface Redactor {
  /** Adds a token to the ones always cut out (the client calls it for every token it holds). */
  remember(token: string): void;
  /** The text with every remembered token and every JWT-shaped run replaced by `[token]`. */
  text(text: string): string;
  /** A deep copy of parsed JSON with every string redacted. */
  value(value: unknown): unknown;
  /**
   * A thrown value to keep as an error's `cause`: itself when it holds no token, else a
   * plain Error copy (same name, redacted message and stack, redacted cause).
   */
  cause(thrown: unknown): unknown;
}

export function createRedactor(): Redactor {
  const tokens: string[] = [];
  const text = (input: string) => {
    let out = input;
    for (const token of tokens) out = out.split(token).join(MASK);
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
  };
  return {
    cause,
    remember(token) {
      // The newest first; a long session keeps the last 32 (tokens are short-lived anyway).
      if (tokens.indexOf(token) < 0 && tokens.unshift(token) > 32) tokens.pop();
    },
    text,
    value,
  };
}
