import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/** The claims of a sandbox JWT. */
export interface SandboxClaims {
  sub: string;
  iss: string;
  iat: number;
  exp: number;
  jti: string;
}

/** Why a token was refused, or its claims. */
export type TokenCheck = { claims: SandboxClaims; reason?: undefined } | { reason: string; claims?: undefined };

const HEADER = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url');

/** How many verified tokens are remembered; the oldest is forgotten first. */
const REMEMBERED = 10_000;

/**
 * HS256 JWTs on node:crypto with one key made at start and kept as a KeyObject, so a check
 * costs one HMAC and one small JSON.parse (no key import per request). A token whose
 * signature was already checked is recognised by its exact text (a Map lookup); its expiry is
 * still checked on every use.
 */
export function createJwtSigner(issuer: string) {
  const key: KeyObject = createSecretKey(randomBytes(32));
  const verified = new Map<string, SandboxClaims>();
  const mac = (data: string) => createHmac('sha256', key).update(data).digest('base64url');

  function sign(claims: SandboxClaims): string {
    const signed = HEADER + '.' + Buffer.from(JSON.stringify(claims)).toString('base64url');
    return signed + '.' + mac(signed);
  }

  function verify(token: string, nowSeconds: number): TokenCheck {
    const claims = verified.get(token) ?? checkSignature(token);
    if (!('sub' in claims)) return claims;
    if (claims.iss !== issuer) return { reason: 'wrong issuer' };
    if (nowSeconds >= claims.exp) return { reason: 'token expired' };
    return { claims };
  }

  /** The claims of a token signed with our key (remembered), or why it is not one. */
  function checkSignature(token: string): SandboxClaims | { reason: string } {
    const dot1 = token.indexOf('.');
    const dot2 = token.indexOf('.', dot1 + 1);
    if (dot1 < 0 || dot2 < 0 || token.indexOf('.', dot2 + 1) >= 0) return { reason: 'not a JWT' };
    const given = token.slice(dot2 + 1);
    const expected = mac(token.slice(0, dot2));
    // Compared as text, in constant time: a base64url decoder ignores stray characters, so
    // comparing decoded bytes would accept variants of a signature.
    let diff = given.length ^ expected.length;
    for (let i = 0; i < expected.length; i++) diff |= given.charCodeAt(i) ^ expected.charCodeAt(i);
    if (diff !== 0) {
      const alg = headerAlg(token.slice(0, dot1));
      return { reason: alg === 'HS256' ? 'signature invalid (tampered or foreign token)' : alg === undefined ? 'not a JWT' : 'algorithm not allowed' };
    }
    // Signed with our key, so the header is ours and the payload is JSON we wrote.
    const claims = JSON.parse(Buffer.from(token.slice(dot1 + 1, dot2), 'base64url').toString()) as SandboxClaims;
    if (verified.size >= REMEMBERED) verified.delete(verified.keys().next().value as string);
    verified.set(token, claims);
    return claims;
  }

  return { sign, verify };
}

/** The header's `alg` (null when it has none), or undefined when the header is not JSON. */
function headerAlg(part: string): unknown {
  try {
    return (JSON.parse(Buffer.from(part, 'base64url').toString()) as { alg?: unknown } | null)?.alg ?? null;
  } catch {
    return undefined;
  }
}
