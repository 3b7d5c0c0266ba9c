// What a failed token call says: the URL, the status or the network error's code, and what to
// check. Only ever built from the URL (no user name or password: baseUrl refuses them), the
// status, error codes and the kind of body, never from the request: no secret can end up here.
import { messageIn } from '../../shared/message.js';

/** Where the service's API paths start: a baseUrl that holds it already is a common slip. */
const API_PREFIX = '/open/api/';

/** The error codes of a failed fetch, outermost first: undici puts the socket's in `cause` (and `cause.errors` for happy eyeballs). */
function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number) => {
    if (typeof value !== 'object' || value === null || seen.has(value) || depth > 4) return;
    seen.add(value);
    const { code, cause, errors } = value as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{2,40}$/.test(code) && codes.indexOf(code) < 0) codes.push(code);
    visit(cause, depth + 1);
    if (Array.isArray(errors)) for (const e of errors) visit(e, depth + 1);
  };
  visit(error, 0);
  return codes;
}

/** The innermost message of a fetch failure ("connect ECONNREFUSED 127.0.0.1:1"), short. */
function causeMessage(error: unknown): string {
  let inner: unknown = error;
  for (let depth = 0; depth < 4; depth++) {
    const next = (inner as { cause?: unknown } | null)?.cause;
    if (typeof next !== 'object' || next === null) break;
    inner = next;
  }
  const message = inner instanceof Error ? inner.message : typeof inner === 'string' ? inner : '';
  const outer = messageIn({ name: true }, error);
  return (inner === error || !message ? outer : message).slice(0, 160);
}

const hostOf = (url: string) => url.replace(/^https?:\/\//i, '').replace(/\/.*$/, '');

/**
 * Why the token endpoint could not be reached: the error code (errno) and what to check, e.g.
 * "ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:1): nothing accepts connections at 127.0.0.1:1; …".
 */
export function describeUnreachable(error: unknown, url: string, clean: (text: string) => string): string {
  const codes = codesOf(error);
  const host = hostOf(url);
  const name = host.replace(/:\d+$/, '');
  const code = codes.find((c) => !/^UND_ERR_SOCKET$/.test(c)) ?? codes[0];
  const said = clean(causeMessage(error));
  const head = code ? code + ' (' + said + ')' : said;
  let advice: string;
  if (code === 'ECONNREFUSED') advice = 'nothing accepts connections at ' + host + ': check the host and port in baseUrl, and that the service runs there';
  else if (code === 'ENOTFOUND') advice = 'the host name ' + name + " does not resolve: check baseUrl for a typo, and this server's DNS";
  else if (code === 'EAI_AGAIN') advice = 'the DNS lookup of ' + name + " failed for now: check this server's DNS resolver";
  else if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT')
    advice = 'connecting to ' + host + ' timed out: check baseUrl, and that a firewall or egress rule lets this server reach it';
  else if (code === 'ENETUNREACH' || code === 'EHOSTUNREACH') advice = 'no route to ' + host + ": check this server's network and firewall";
  else if (code && /SSL|TLS|EPROTO/.test(code))
    advice = 'the TLS handshake with ' + host + " failed: check that baseUrl's scheme (http or https) matches the port";
  else if (code && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/.test(code))
    advice = 'the certificate of ' + name + " is not trusted or does not match: check baseUrl's host name (for a private CA, set NODE_EXTRA_CA_CERTS)";
  else if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET')
    advice = 'the connection to ' + host + " was closed: check baseUrl's scheme and port, and any proxy in between";
  else advice = 'check baseUrl, and that this server can reach ' + host + ' (DNS, firewall, proxy)';
  return head + '. ' + advice[0].toUpperCase() + advice.slice(1) + '.';
}

/** What a body that is not the service's envelope looks like, without quoting it: "an HTML page", "an empty body"… */
export function describeAnswer(text: string, contentType: string | null): string {
  const start = text.trimStart();
  if (start === '') return 'an empty body';
  if (start.startsWith('<')) return /^<(!doctype html|html)/i.test(start) ? 'an HTML page' : 'XML or HTML (' + text.length + ' bytes)';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not JSON (' + text.length + ' bytes' + (contentType ? ', ' + contentType.slice(0, 60) : '') + ')';
  }
  if (Array.isArray(value)) return 'a JSON array';
  if (typeof value !== 'object' || value === null) return 'JSON ' + (value === null ? 'null' : typeof value) + ', not an object';
  const keys = Object.keys(value)
    .slice(0, 5)
    .map((k) => JSON.stringify(k.slice(0, 30)));
  return keys.length ? 'a JSON object without "code" (keys ' + keys.join(', ') + ')' : 'an empty JSON object';
}

/** The hint for a baseUrl that does not lead to the service. */
export function describeUrlMistake(baseUrl: string): string {
  if (baseUrl.toLowerCase().indexOf(API_PREFIX) >= 0)
    return "baseUrl must be the service's root (e.g. https://channel.example.com) without " + API_PREFIX + '…: the SDK adds the path';
  return (
    'baseUrl (' +
    baseUrl +
    ') may point at another server (a web page, a gateway, your own app) rather than the Channel service: check it against the integration configuration'
  );
}

/** What to check after a non-2xx answer. `said`: the service's own message, if any. */
export function describeHttpRefusal(status: number, said: string, baseUrl: string): string {
  if (baseUrl.toLowerCase().indexOf(API_PREFIX) >= 0) return 'Wrong baseUrl: ' + describeUrlMistake(baseUrl) + '.';
  if (status === 401 || status === 403) {
    const extra = /timestamp|window|clock|expired/i.test(said)
      ? " This server's clock may be off: check that it is synchronised (NTP)."
      : /nonce|replay/i.test(said)
        ? ' A nonce was reused: a custom sign function must make a new nonce for every call.'
        : '';
    return (
      "The service refused the signed request: check that secretKey is the secret key paired with accessKey in the integration configuration (no spaces or quotes around it), and that sign follows the service's signing scheme (the default is the reference scheme the sandbox verifies)." +
      extra
    );
  }
  if (status === 404 || status === 405) return 'Nothing answers tokens at that path: ' + describeUrlMistake(baseUrl) + '.';
  if (status === 408 || status === 429) return 'The service is busy or throttling: try again shortly.';
  if (status >= 500) return 'The service, or a gateway in front of it, failed: try again later; if it persists, check baseUrl.';
  return "Check baseUrl, and the service's message above.";
}
