import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

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

/**
 * HS256 JWTs on node:crypto with one key made at start and kept as a KeyObject, so a check
 * costs one HMAC and one small JSON.parse (no key import per request).
 */
export function createJwtSigner(issuer: string) {
  const key: KeyObject = createSecretKey(randomBytes(32));
  const mac = (data: string) => createHmac('sha256', key).update(data).digest('base64url');

  function sign(claims: SandboxClaims): string {
    const signed = HEADER + '.' + Buffer.from(JSON.stringify(claims)).toString('base64url');
    return signed + '.' + mac(signed);
  }

  function verify(token: string, nowSeconds: number): TokenCheck {
    const dot1 = token.indexOf('.');
    const dot2 = token.indexOf('.', dot1 + 1);
    if (dot1 < 0 || dot2 < 0 || token.indexOf('.', dot2 + 1) >= 0) return { reason: 'not a JWT' };
    const given = token.slice(dot2 + 1);
    const expected = mac(token.slice(0, dot2));
    // Compared as text: a base64url decoder ignores stray characters, so comparing bytes would accept variants.
    if (given.length !== expected.length || !timingSafeEqual(Buffer.from(given), Buffer.from(expected))) {
      return { reason: headerAlg(token.slice(0, dot1)) === 'HS256' ? 'signature invalid (tampered or foreign token)' : 'algorithm not allowed' };
    }
    // Signed with our key, so the header is ours and the payload is JSON we wrote.
    const claims = JSON.parse(Buffer.from(token.slice(dot1 + 1, dot2), 'base64url').toString()) as SandboxClaims;
    if (claims.iss !== issuer) return { reason: 'wrong issuer' };
    if (nowSeconds >= claims.exp) return { reason: 'token expired' };
    return { claims };
  }

  return { sign, verify };
}

function headerAlg(part: string): unknown {
  try {
    return (JSON.parse(Buffer.from(part, 'base64url').toString()) as { alg?: unknown }).alg;
  } catch {
    return undefined;
  }
}
