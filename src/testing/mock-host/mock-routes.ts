import { describeValue, fail } from '../../shared/check.js';
import type { MockRoute } from './types.js';

/** A route that matched: its handler and the `:name` segments. */
export interface RouteMatch {
  route: MockRoute;
  params: Record<string, string>;
}

const KEY = /^(?:([A-Z]+) +)?((?:https?:\/\/[^/\s]+)?\/\S*)$/;

/**
 * The routes of one option (`routes` or `service`), keyed `'GET /path'`, `'POST https://host/path'`
 * or `'/path'` (any method); `:name` matches one path segment. A key or a handler of the wrong
 * shape is a ConfigError.
 */
export function routeTable(routes: Record<string, MockRoute> | undefined, option: string) {
  if (routes !== undefined && (typeof routes !== 'object' || routes === null || Array.isArray(routes)))
    fail(`createMockHost ${option} must be an object of routes, e.g. { 'GET /open/api/v1/sdk/orders': () => ({ body }) }`);
  const table = Object.entries(routes ?? {}).map(([key, route]) => {
    const parsed = KEY.exec(key);
    if (!parsed) fail(`createMockHost ${option} key ${JSON.stringify(key)}: write 'GET /path', 'POST https://host.example/path' or '/path' (any method)`);
    if (typeof route !== 'function')
      fail(`createMockHost ${option}[${JSON.stringify(key)}] must be a function (request) => ({ status, body }); got ${describeValue(route)}`);
    const [, method, target] = parsed;
    const at = target.indexOf('/', target.indexOf('//') + 2);
    const origin = target.startsWith('/') ? undefined : target.slice(0, at);
    return { key, method, origin, segments: (origin ? target.slice(at) : target).split('/'), route };
  });

  return {
    /** The first route for this method and URL. */
    match(method: string, url: URL): RouteMatch | undefined {
      const segments = url.pathname.split('/');
      for (const entry of table) {
        if ((entry.method && entry.method !== method) || (entry.origin && entry.origin !== url.origin)) continue;
        if (entry.segments.length !== segments.length) continue;
        const params: Record<string, string> = {};
        const same = entry.segments.every((part, i) => {
          if (!part.startsWith(':')) return part === segments[i];
          if (!segments[i]) return false;
          params[part.slice(1)] = decodeURIComponent(segments[i]);
          return true;
        });
        if (same) return { route: entry.route, params };
      }
      return undefined;
    },
    keys: () => table.map((entry) => entry.key),
  };
}
