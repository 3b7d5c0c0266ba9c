import { describeValue } from './check.js';

/**
 * The message of anything thrown, without quoting objects: an Error's message, or the
 * `errMsg` / `errorMessage` / `message` of a mini-program host's fail object.
 */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  const o = error as { errMsg?: unknown; errorMessage?: unknown; message?: unknown } | null;
  const text = o && typeof o === 'object' ? [o.errMsg, o.errorMessage, o.message].filter((t) => typeof t === 'string')[0] : undefined;
  return typeof text === 'string' ? text : describeValue(error);
}

/** How {@link messageIn} words a thrown value; each caller keeps the wording its messages always had. */
export interface MessageStyle {
  /** `TypeError: ...` rather than `...`. */
  name?: boolean;
  /** Without the `[channel-sdk] ` prefix (for a log line that carries it already). */
  unprefixed?: boolean;
  /** What a thrown value that is not an Error becomes. @default String */
  other?: (thrown: unknown) => string;
}

/** {@link messageOf} in the style of a log line or a server error (the client's bundles leave it out). */
export function messageIn(style: MessageStyle, error: unknown): string {
  const text = error instanceof Error ? (style.name ? error.name + ': ' : '') + messageOf(error) : (style.other || String)(error);
  return style.unprefixed ? text.replace(/^\[channel-sdk\] /, '') : text;
}
