/**
 * JWT-shaped runs: any JWS compact token (a base64url JSON header, `eyJ` being `{"`, with the
 * characters glued before it, then payload and signature), and any long three-part string.
 * Host names (a few short labels) stay readable.
 */
const jwt = /[\w-]*eyJ[\w-]+\.[\w-]+\.[\w-]*|[\w-]{16,}\.[\w-]{16,}\.[\w-]{16,}/g;

/** What a masked token reads as. */
export const MASK = '[token]';

/** `text` with every JWT-shaped run replaced by `[token]`. */
export const maskTokens = (text: string): string => text.replace(jwt, MASK);
