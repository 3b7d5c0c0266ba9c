/**
 * A short fingerprint of a token (FNV-1a, 32 bits, base 36). The client names the token a 401
 * just rejected by it (`rejected` in tokenProvider's context), without sending the token anywhere
 * new; createTokenRoute and getToken compute the same over the token they hold, and never answer
 * a forced refresh with that one. It tells nothing usable about the token.
 */
export function tokenFingerprint(token: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < token.length; i++) hash = Math.imul(hash ^ token.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(36);
}
