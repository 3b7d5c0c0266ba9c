import type { EventLog } from './event-log.js';
import type { createFileStore, DataAnswer, Upload } from './file-routes.js';
import { orderBodyProblems, type createOrderStore } from './orders.js';
import { SANDBOX_CODES, SANDBOX_PATHS } from './sandbox-api.js';
import type { SandboxStats } from './types.js';

const ORDER_PATH = /^\/open\/api\/v1\/sdk\/orders\/([^/]+)$/;
const PHOTO_PATH = /^\/open\/api\/v1\/sdk\/photos\/([^/]+)$/;
const INVOICE_PATH = /^\/open\/api\/v1\/sdk\/invoices\/([^/]+)$/;

/** A data call as the routes read it, whoever carried it (the sandbox's HTTP server, a mock host). */
export interface DataRequest {
  method: string;
  path: string;
  /** The query string without `?`. */
  query: string;
  /** `http://127.0.0.1:8787`: where the call was sent, for the URLs an answer gives. */
  origin: string;
  authorization: string | undefined;
  body: Uint8Array;
  /** A multipart body, read (or why it could not be); undefined when the body is not multipart. */
  upload?: Upload | { error: string };
}

/** What the data routes use of their sandbox. */
export interface DataRouteContext {
  stats: SandboxStats;
  events: EventLog;
  orders: ReturnType<typeof createOrderStore>;
  files: ReturnType<typeof createFileStore>;
  /** What failNext() set: the next `count` data calls answer `status`. */
  failing: { count: number; status: number; retryAfterSeconds: number | undefined };
  /** The token's jti when its Bearer token is good, else why not. */
  checkBearer(authorization: string | undefined): { reason?: string; jti?: string };
}

const json = (status: number, value: unknown, headers: Record<string, string> = {}): DataAnswer => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  body: JSON.stringify(value),
});

/** What a data call's admission decides: its refusal, or the token it carried. */
export type Admission = { refused: DataAnswer; jti?: undefined } | { refused?: undefined; jti: string | undefined };

/**
 * The sandbox's Bearer-protected data routes ({@link SANDBOX_PATHS}), after failNext. `admit`
 * and `record` are the check every data route passes and its event, for routes of a mock host's own.
 */
export function createDataRoute({ stats, events, orders, files, failing, checkBearer }: DataRouteContext) {
  /** failNext first, then the Bearer token: a refusal (counted, with its event) or the token's jti. */
  function admit({ method, path, query, authorization }: Pick<DataRequest, 'method' | 'path' | 'query' | 'authorization'>): Admission {
    stats.dataCalls++;
    const search = query ? { query } : {};
    if (failing.count > 0) {
      failing.count--;
      const status = failing.status;
      if (status === 401) stats.unauthorized++;
      events.emit({ type: 'data', method, path, ...search, status, reason: 'failNext' });
      const retryAfter: Record<string, string> = failing.retryAfterSeconds === undefined ? {} : { 'retry-after': String(failing.retryAfterSeconds) };
      return { refused: json(status, { code: status === 401 ? SANDBOX_CODES.failNext : status * 100 + 90, message: 'failNext' }, retryAfter) };
    }
    const { reason, jti } = checkBearer(authorization);
    if (!reason) return { jti };
    stats.unauthorized++;
    events.emit({ type: 'data', method, path, ...search, status: 401, reason, ...(jti ? { jti } : {}) });
    return { refused: json(401, { code: SANDBOX_CODES.unauthorized, message: reason }) };
  }

  /** The event of an admitted call, once its status is known. */
  function record({ method, path, query }: Pick<DataRequest, 'method' | 'path' | 'query'>, status: number, jti: string | undefined): void {
    events.emit({ type: 'data', method, path, ...(query ? { query } : {}), status, jti });
  }

  function answer(req: DataRequest): DataAnswer {
    const admission = admit(req);
    if (admission.refused) return admission.refused;
    const answered = route(req);
    record(req, answered.status, admission.jti);
    return answered;
  }

  function route({ method, path, query, origin, body, upload }: DataRequest): DataAnswer {
    const wrongMethod = (allow: string) =>
      json(405, { code: SANDBOX_CODES.methodNotAllowed, message: `${method} is not served here; use ${allow}` }, { allow });
    const isGet = method === 'GET' || method === 'HEAD';
    if (path === SANDBOX_PATHS.orders) {
      if (isGet) return json(200, { code: 0, data: { orders: orders.list() } });
      if (method !== 'POST') return wrongMethod('GET, POST');
      let input: unknown;
      try {
        input = JSON.parse(Buffer.from(body).toString('utf8'));
      } catch {
        return json(400, { code: SANDBOX_CODES.badRequest, message: 'the body must be JSON like {"partner_order_no":"P-20001"} (send it with json: {...})' });
      }
      const problems = orderBodyProblems(input);
      if (problems) return json(400, { code: SANDBOX_CODES.badRequest, message: problems });
      return json(200, { code: 0, data: orders.create(input as { partner_order_no: string; sku?: string; qty?: number }) });
    }
    const one = ORDER_PATH.exec(path);
    if (one) {
      if (!isGet) return wrongMethod('GET');
      const order = orders.get(decodeURIComponent(one[1]));
      return order ? json(200, { code: 0, data: order }) : json(404, { code: SANDBOX_CODES.notFound, message: 'no order ' + one[1] });
    }
    if (path === SANDBOX_PATHS.logistics) {
      if (!isGet) return wrongMethod('GET');
      const orderNo = new URLSearchParams(query).get('order_no');
      if (!orderNo) return json(400, { code: SANDBOX_CODES.badRequest, message: 'order_no is required, e.g. ?order_no=SO20240601001' });
      const found = orders.logistics(orderNo);
      return found ? json(200, { code: 0, data: found }) : json(404, { code: SANDBOX_CODES.notFound, message: 'no order ' + orderNo });
    }
    if (path === SANDBOX_PATHS.echo) return json(200, { code: 0, data: { method, body: Buffer.from(body).toString('utf8') } });
    if (path === SANDBOX_PATHS.photos) return method === 'POST' ? files.savePhoto(upload, origin, path) : wrongMethod('POST');
    const photo = PHOTO_PATH.exec(path);
    if (photo) return isGet ? files.photo(decodeURIComponent(photo[1])) : wrongMethod('GET');
    const invoice = INVOICE_PATH.exec(path);
    if (invoice) return isGet ? files.invoice(decodeURIComponent(invoice[1])) : wrongMethod('GET');
    return json(404, { code: SANDBOX_CODES.notFound, message: unknownPath(path) });
  }

  return { answer, admit, record };
}

/**
 * The 404 of a path the sandbox has no route for: the path as it arrived (a first mistake shows
 * there: a baseUrl with a path of its own, and that path again in the call) and the paths it serves.
 */
function unknownPath(path: string): string {
  const shown = path.length > 200 ? path.slice(0, 200) + '…' : path;
  const at = path.indexOf(API_PREFIX, 1);
  return (
    'no route ' +
    JSON.stringify(shown) +
    (at > 0
      ? ': ' +
        JSON.stringify(path.slice(0, at)) +
        ' comes before ' +
        API_PREFIX +
        "; is it in baseUrl too? baseUrl is the service's origin (e.g. http://127.0.0.1:8787) and each call passes the whole path"
      : '') +
    '; the sandbox serves ' +
    Object.values(SANDBOX_PATHS).join(', ')
  );
}

const API_PREFIX = '/open/api/v1/sdk/';
