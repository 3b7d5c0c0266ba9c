import { TokenProviderError } from '../../errors/TokenProviderError.js';
import { describeValue } from '../../shared/check.js';
import { isJwt } from './jwt-claims.js';

/**
 * What tokenProvider resolved to, as the token string, or a TokenProviderError naming the fix. White
 * space around it is dropped (a first try's `res.text()` of a file or of a plain answer ends in a
 * line break, which no header may carry).
 */
export function tokenFromAnswer(value: unknown): string {
  if (typeof value === 'string') value = value.trim();
  if (typeof value !== 'string') {
    if (value !== null && typeof value === 'object') {
      // What a first try returns: a fetch Response, a host's request task (no Promise around
      // wx.request), getToken's { accessToken }, the route's answer or the whole envelope.
      const hint =
        'bodyUsed' in value
          ? 'a Response; return (await response.json()).access_token'
          : 'abort' in value
            ? 'a request task; return a Promise, resolve(res.data.access_token) in success'
            : 'an object; return ' +
              ('access_token' in value
                ? 'access_token'
                : 'accessToken' in value
                  ? 'accessToken'
                  : 'data' in value
                    ? 'data.access_token'
                    : 'the access_token string');
      throw new TokenProviderError('tokenProvider returned ' + hint + ', the string itself');
    }
    throw new TokenProviderError(
      'tokenProvider returned ' +
        describeValue(value) +
        '; it must resolve to the access_token string' +
        (value === undefined ? ' (is a `return` missing, or did your token route answer an error? check its status first)' : ''),
    );
  }
  if (value === '') throw new TokenProviderError('tokenProvider returned an empty string; return the access_token from the token endpoint');
  if (/^bearer\s/i.test(value)) {
    throw new TokenProviderError('tokenProvider returned a string starting with "Bearer "; return the token alone, the SDK adds the prefix');
  }
  if (!isJwt(value as unknown)) {
    // The value itself is never quoted: it may be a credential.
    throw new TokenProviderError(
      'tokenProvider returned a string of ' +
        value.length +
        ' characters that is not a JWT (header.payload.signature, base64url); return access_token from the token endpoint, not a console login token or a session id',
    );
  }
  return value;
}
