// Reads `iat`/`exp` from a JWT without atob or TextDecoder (absent on mini-program hosts).

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** JWS compact form: three base64url parts; the signature may be empty. */
export const jwtShape = /^[\w-]+\.[\w-]+\.[\w-]*$/;

/** The payload of a JWT-shaped string as an object, or undefined if it does not decode to one. */
export function decodePayload(token: string): Record<string, unknown> | undefined {
  const part = token.split('.')[1] || '';
  let binary = '';
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < part.length; i++) {
    buffer = ((buffer << 6) | alphabet.indexOf(part.charAt(i))) & 0xffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      binary += String.fromCharCode((buffer >> bits) & 0xff);
    }
  }
  try {
    // UTF-8 bytes read as Latin-1 still form valid JSON; only `iat`/`exp` are read from it.
    const payload: unknown = JSON.parse(binary);
    return typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? (payload as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `value` is what a tokenProvider may return: a JWT-shaped string whose payload decodes. */
export function isJwt(value: unknown): value is string {
  return typeof value === 'string' && jwtShape.test(value) && !!decodePayload(value);
}

/** The token's `iat` and `exp` in epoch ms, each when it is a finite number. */
export function claimsOf(token: string): { iat?: number; exp?: number } {
  const payload = decodePayload(token) || {};
  const ms = (value: unknown) => (typeof value === 'number' && isFinite(value) ? value * 1000 : undefined);
  return { iat: ms(payload.iat), exp: ms(payload.exp) };
}
