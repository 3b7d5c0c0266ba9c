import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EventLog } from './event-log.js';
import { corsHeaders, sendJson } from '../http-io.js';
import { orderBodyProblems, type createOrderStore } from './orders.js';
import { SANDBOX_CODES, SANDBOX_PATHS } from './sandbox-api.js';
import type { SandboxStats } from './types.js';

const ORDER_PATH = /^\/open\/api\/v1\/sdk\/orders\/([^/]+)$/;

/** What the data routes use of their sandbox. */
export interface DataRouteContext {
  stats: SandboxStats;
  events: EventLog;
  orders: ReturnType<typeof createOrderStore>;
  /** What failNext() set: the next `count` data calls answer `status`. */
  failing: { count: number; status: number; retryAfterSeconds: number | undefined };
  /** The token's jti when its Bearer token is good, else why not. */
  checkBearer(req: IncomingMessage): { reason?: string; jti?: string };
}

/** The sandbox's Bearer-protected data routes ({@link SANDBOX_PATHS}), after failNext. */
export function createDataRoute({ stats, events, orders, failing, checkBearer }: DataRouteContext) {
  function dataRoute(req: IncomingMessage, body: Buffer, res: ServerResponse, path: string, query: string): void {
    stats.dataCalls++;
    const method = req.method ?? 'GET';
    const search = query ? { query } : {};
    if (failing.count > 0) {
      failing.count--;
      const status = failing.status;
      if (status === 401) stats.unauthorized++;
      events.emit({ type: 'data', method, path, ...search, status, reason: 'failNext' });
      const retryAfter: Record<string, string> = failing.retryAfterSeconds === undefined ? {} : { 'retry-after': String(failing.retryAfterSeconds) };
      return sendJson(
        res,
        status,
        { code: status === 401 ? SANDBOX_CODES.failNext : status * 100 + 90, message: 'failNext' },
        { ...corsHeaders, ...retryAfter },
      );
    }
    const { reason, jti } = checkBearer(req);
    if (reason) {
      stats.unauthorized++;
      events.emit({ type: 'data', method, path, ...search, status: 401, reason, ...(jti ? { jti } : {}) });
      return sendJson(res, 401, { code: SANDBOX_CODES.unauthorized, message: reason }, corsHeaders);
    }
    const answer = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      events.emit({ type: 'data', method, path, ...search, status, jti });
      sendJson(res, status, value, { ...corsHeaders, ...headers });
    };
    const wrongMethod = (allow: string) =>
      answer(405, { code: SANDBOX_CODES.methodNotAllowed, message: `${method} is not served here; use ${allow}` }, { allow });
    const isGet = method === 'GET' || method === 'HEAD';
    if (path === SANDBOX_PATHS.orders) {
      if (isGet) return answer(200, { code: 0, data: { orders: orders.list() } });
      if (method !== 'POST') return wrongMethod('GET, POST');
      let input: unknown;
      try {
        input = JSON.parse(body.toString('utf8'));
      } catch {
        return answer(400, { code: SANDBOX_CODES.badRequest, message: 'the body must be JSON like {"partner_order_no":"P-20001"} (send it with json: {...})' });
      }
      const problems = orderBodyProblems(input);
      if (problems) return answer(400, { code: SANDBOX_CODES.badRequest, message: problems });
      return answer(200, { code: 0, data: orders.create(input as { partner_order_no: string; sku?: string; qty?: number }) });
    }
    const one = ORDER_PATH.exec(path);
    if (one) {
      if (!isGet) return wrongMethod('GET');
      const order = orders.get(decodeURIComponent(one[1]));
      return order ? answer(200, { code: 0, data: order }) : answer(404, { code: SANDBOX_CODES.notFound, message: 'no order ' + one[1] });
    }
    if (path === SANDBOX_PATHS.logistics) {
      if (!isGet) return wrongMethod('GET');
      const orderNo = new URLSearchParams(query).get('order_no');
      if (!orderNo) return answer(400, { code: SANDBOX_CODES.badRequest, message: 'order_no is required, e.g. ?order_no=SO20240601001' });
      const found = orders.logistics(orderNo);
      return found ? answer(200, { code: 0, data: found }) : answer(404, { code: SANDBOX_CODES.notFound, message: 'no order ' + orderNo });
    }
    if (path === SANDBOX_PATHS.echo) return answer(200, { code: 0, data: { method, body: body.toString('utf8') } });
    return answer(404, { code: SANDBOX_CODES.notFound, message: 'the sandbox serves ' + Object.values(SANDBOX_PATHS).join(', ') });
  }

  return dataRoute;
}
