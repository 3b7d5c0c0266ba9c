import { describeValue } from './check.js';

/**
 * The message of anything thrown, without quoting objects: an Error's message, or the
 * `errMsg` / `errorMessage` / `message` of a mini-program host's fail object.
 */
export function messageOf(error: unknown): string {
  // What user code throws may throw when read (a getter, a revoked Proxy): a message is still a string.
  try {
    if (error instanceof Error) return typeof error.message === 'string' ? error.message : describeValue(error.message);
    const o = error as { errMsg?: unknown; errorMessage?: unknown; message?: unknown } | null;
    const text = o && typeof o === 'object' ? [o.errMsg, o.errorMessage, o.message].filter((t) => typeof t === 'string')[0] : undefined;
    return typeof text === 'string' ? text : describeValue(error);
  } catch {
    return 'an unreadable ' + typeof error;
  }
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
  let text: string;
  try {
    text = error instanceof Error ? (style.name ? error.name + ': ' : '') + messageOf(error) : (style.other || String)(error);
  } catch {
    text = messageOf(error); // String() of a null-prototype object or a revoked Proxy throws
  }
  return style.unprefixed ? text.replace(/^\[channel-sdk\] /, '') : text;
}
