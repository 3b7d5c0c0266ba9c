import type { IncomingMessage } from 'node:http';

// The control API can point every push at any URL, so no web page may drive it (issue #21:
// an <iframe> on another site, a GET without Origin, registered a listener and took every
// push). Together with control.ts, which takes writes only as POSTs of application/json (a
// request a page cannot send without a CORS preflight, which the sandbox never grants):
// - Origin: browsers send it on every POST and on cross-origin fetches;
// - Sec-Fetch-Site: current browsers send it to loopback and https addresses on every request,
//   iframes and images included (not to a plain-http name: hence the Host check);
// - Host: a DNS-rebinding page is same-origin with the sandbox under the attacker's plain-http
//   name, so its GETs carry neither of the above; its Host is still that name, refused here.

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/**
 * The host name of a Host header, lower-case, without the port or IPv6 brackets' content
 * check; undefined when there is none.
 */
export function hostName(host: string | undefined): string | undefined {
  if (!host) return undefined;
  const value = host.trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(0, value.indexOf(']') + 1) || value;
  const colon = value.lastIndexOf(':');
  return colon < 0 ? value : value.slice(0, colon);
}

/**
 * Names a rebinding page cannot have: IP literals, `localhost` and `*.localhost` (browsers
 * resolve those to loopback themselves), single-label names (`sandbox` in a compose network:
 * an attacker's public DNS name has a dot), and the names the sandbox was told to answer.
 */
export function isControlHost(name: string, extra: readonly string[]): boolean {
  return (
    IPV4.test(name) ||
    (name.startsWith('[') && name.endsWith(']')) ||
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    !name.includes('.') ||
    extra.includes(name)
  );
}

/** Why a request may not use the control API (a browser or a page), or undefined. */
export function controlRefusal(req: IncomingMessage, hosts: readonly string[]): string | undefined {
  if (req.headers.origin !== undefined) return 'the control API does not answer browsers (a request with an Origin header)';
  const site = req.headers['sec-fetch-site'];
  // `none`: the user typed the address (a GET); a page never sends it.
  if (site !== undefined && site !== 'none') return `the control API does not answer web pages (Sec-Fetch-Site: ${site})`;
  const name = hostName(req.headers.host);
  if (name !== undefined && !isControlHost(name, hosts)) {
    return `the control API does not answer the host name ${name} (a guard against DNS rebinding): reach it by IP address or localhost, or start the sandbox with --control-host ${name} (controlHosts: ['${name}'])`;
  }
  return undefined;
}
