import { hostName } from './control-guard.js';
import { fail } from '../../shared/check.js';

/** The options startSandbox takes. */
export const OPTION_KEYS = [
  'port',
  'host',
  'tokenTtlSeconds',
  'webhookUrl',
  'webhookSecret',
  'webhookTimeoutMs',
  'credentials',
  'now',
  'controlApi',
  'controlHosts',
  'onEvent',
];

/** `controlHosts` checked, in lower case. */
export function checkControlHosts(hosts: unknown): string[] {
  if (hosts === undefined) return [];
  const valid = Array.isArray(hosts) && hosts.every((h) => typeof h === 'string' && /^[a-z0-9.-]+$/i.test(h) && hostName(h) === h.toLowerCase());
  if (!valid) fail("controlHosts must be an array of host names without port or scheme, e.g. ['sandbox.ci.internal']");
  return (hosts as string[]).map((h) => h.toLowerCase());
}

/** `tokenTtlSeconds` checked. */
export function checkTtl(seconds: number): number {
  if (typeof seconds !== 'number' || !(seconds > 0) || !Number.isFinite(seconds)) fail('tokenTtlSeconds must be a positive number of seconds');
  return seconds;
}
