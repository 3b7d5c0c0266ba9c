import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigError } from '../../errors/ConfigError.js';
import { externalUserIdProblem } from '../../server/tokens/exchange-options.js';
import { isLoopback, openEventStream, readBody, sendJson } from '../http-io.js';
import { controlRefusal } from './control-guard.js';
import type { EventLog } from './event-log.js';
import type { FailNextOptions, Sandbox } from './types.js';

/** Where the sandbox's own control API lives (not a path of the service). */
export const CONTROL_PREFIX = '/__sandbox/';

const FAIL_STATUSES = [401, 408, 429, 500, 502, 503, 504];

/** What the control API drives: the sandbox itself, its event log and its listeners. */
export interface ControlTarget {
  sandbox: Sandbox;
  events: EventLog;
  mode: 'loopback' | 'any';
  /** Host names the control API answers besides IP addresses, localhost and single-label names. */
  hosts: readonly string[];
  defaultOrder: string;
  addListener(res: ServerResponse, forwardTo: string): void;
  report(listenerId: string, id: number, outcome: { status?: number; error?: string; answer?: string }): boolean;
  state(): Record<string, unknown>;
}

class BadRequest extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** The control routes that change the sandbox: each is a POST of JSON (`GET stats` and `GET events` only read). */
const WRITES = ['expire', 'fail-next', 'push', 'token', 'ttl', 'verify', 'listen'];
const LISTEN_RESULT = /^listen\/[\w-]+\/result$/;

/**
 * The control API (the sandbox's own): `GET stats`, `GET events` (SSE), and the writes
 * `POST expire`, `POST fail-next`, `POST push`, `POST token`, `POST ttl`, `POST verify`,
 * `POST listen` (SSE) and `POST listen/<id>/result`. JSON in, JSON out; errors are `{ "error": "…" }`.
 */
export async function handleControl(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, t: ControlTarget): Promise<void> {
  // A web page must never drive the sandbox: it could point pushes anywhere (control-guard.ts).
  const refused = controlRefusal(req, t.hosts);
  if (refused) return sendJson(res, 403, { error: refused });
  if (t.mode === 'loopback' && !isLoopback(req.socket.remoteAddress)) {
    return sendJson(res, 403, { error: 'the control API answers this machine only; start the sandbox with --control any to open it' });
  }
  const name = path.slice(CONTROL_PREFIX.length);
  const route = req.method + ' ' + name;
  // A write needs a request no page can make without CORS consent: a POST of application/json.
  if (WRITES.includes(name) || LISTEN_RESULT.test(name)) {
    if (name === 'listen' && req.method === 'GET')
      return sendJson(
        res,
        405,
        { error: 'listen is POST /__sandbox/listen with {"forward_to":"http://…"} and Content-Type: application/json' },
        { allow: 'POST' },
      );
    if (req.method !== 'POST')
      return sendJson(res, 405, { error: `${name} changes the sandbox: use POST with Content-Type: application/json` }, { allow: 'POST' });
    if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
      return sendJson(res, 415, {
        error: 'send the body as JSON with Content-Type: application/json, e.g. curl -H "content-type: application/json" -d \'{"count":2}\'',
      });
    }
  }
  try {
    const listenResult = req.method === 'POST' && LISTEN_RESULT.test(name) ? /^listen\/([\w-]+)/.exec(name) : null;
    if (listenResult) {
      const body = await jsonBody(req);
      const id = body.id;
      if (!Number.isInteger(id)) throw new BadRequest('id: the push id is required');
      const outcome = {
        status: Number.isInteger(body.status) ? (body.status as number) : undefined,
        error: typeof body.error === 'string' ? body.error.slice(0, 300) : undefined,
        answer: typeof body.answer === 'string' ? body.answer : undefined,
      };
      if (outcome.status === undefined && outcome.error === undefined) throw new BadRequest('status or error is required');
      const taken = t.report(listenResult[1], id as number, outcome);
      return sendJson(
        res,
        taken ? 200 : 409,
        taken ? { ok: true } : { error: 'no push ' + id + ' is waiting on this listener (it timed out or the listener reconnected)' },
      );
    }
    switch (route) {
      case 'GET stats':
        return sendJson(res, 200, { ...t.sandbox.stats, ...t.state() });
      case 'POST expire':
        return sendJson(res, 200, { expired: t.sandbox.expireTokens() });
      case 'POST fail-next': {
        const body = await jsonBody(req);
        const count = body.count ?? 1;
        if (!Number.isInteger(count) || (count as number) < 0 || (count as number) > 1000) throw new BadRequest('count must be a whole number from 0 to 1000');
        const status = body.status ?? 401;
        if (!FAIL_STATUSES.includes(status as number)) throw new BadRequest('status must be one of ' + FAIL_STATUSES.join(', '));
        const retryAfter = body.retryAfter;
        if (retryAfter !== undefined && (!Number.isInteger(retryAfter) || (retryAfter as number) < 0 || (retryAfter as number) > 3600))
          throw new BadRequest('retryAfter must be a whole number of seconds from 0 to 3600');
        t.sandbox.failNext(count as number, { status: status as FailNextOptions['status'], retryAfterSeconds: retryAfter as number | undefined });
        return sendJson(res, 200, { count, status });
      }
      case 'POST push': {
        const body = await jsonBody(req);
        const order = body.order ?? t.defaultOrder;
        if (typeof order !== 'string') throw new BadRequest('order must be an order number such as ' + t.defaultOrder);
        if (body.tamper !== undefined && typeof body.tamper !== 'boolean') throw new BadRequest('tamper must be true or false');
        if (body.fresh !== undefined && typeof body.fresh !== 'boolean') throw new BadRequest('fresh must be true or false');
        const to = body.to;
        if (to !== undefined && (typeof to !== 'string' || !/^https?:\/\/[^\s/]+/i.test(to))) throw new BadRequest('to must be an http(s) URL');
        return sendJson(
          res,
          200,
          await t.sandbox.pushLogistics(order, {
            url: to as string | undefined,
            tamper: body.tamper as boolean | undefined,
            fresh: body.fresh as boolean | undefined,
          }),
        );
      }
      case 'POST token': {
        const body = await jsonBody(req);
        const problem = externalUserIdProblem(body.user);
        if (problem) throw new BadRequest('user ' + problem);
        const accessToken = await t.sandbox.issueToken(body.user as string);
        return sendJson(res, 200, { access_token: accessToken, expires_in: t.sandbox.tokenTtlSeconds, token_type: 'Bearer' });
      }
      case 'POST ttl': {
        const body = await jsonBody(req);
        if (!Number.isInteger(body.seconds) || (body.seconds as number) < 1 || (body.seconds as number) > 86_400)
          throw new BadRequest('seconds must be a whole number from 1 to 86400');
        t.sandbox.setTokenTtl(body.seconds as number);
        return sendJson(res, 200, { tokenTtlSeconds: body.seconds });
      }
      case 'GET events': {
        const stream = openEventStream(res);
        // Replays what the client missed (EventSource sends Last-Event-ID on reconnect; ?since= does the same).
        const after = Number(req.headers['last-event-id'] ?? query.get('since') ?? Number.NaN);
        if (Number.isInteger(after)) for (const event of t.events.since(after)) stream.send(event.type, event, event.seq);
        const stop = t.events.subscribe((event) => stream.send(event.type, event, event.seq));
        return void res.on('close', stop);
      }
      case 'POST verify': {
        const body = await jsonBody(req);
        if (typeof body.token !== 'string' || body.token === '') throw new BadRequest('token: the JWT to check is required');
        return sendJson(res, 200, t.sandbox.verifyToken(body.token));
      }
      case 'POST listen': {
        const forwardTo = (await jsonBody(req)).forward_to;
        if (typeof forwardTo !== 'string' || !/^https?:\/\/[^\s/]+/i.test(forwardTo)) throw new BadRequest('forward_to must be an http(s) URL');
        return t.addListener(res, forwardTo);
      }
      default:
        throw new BadRequest('no control route ' + route + ' (see channel-sandbox --help)', 404);
    }
  } catch (error) {
    if (res.headersSent) return void res.end();
    if (error instanceof BadRequest) return sendJson(res, error.status, { error: error.message });
    if (error instanceof ConfigError) return sendJson(res, 400, { error: error.message.replace(/^\[channel-sdk\] /, '') });
    return sendJson(res, 500, { error: (error as Error).message });
  }
}

async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const raw = await readBody(req, 64 * 1024);
  if (!raw) throw new BadRequest('body larger than 64 KiB', 413);
  if (raw.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new BadRequest('the body must be JSON, e.g. {"count":2}');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BadRequest('the body must be a JSON object');
  return value as Record<string, unknown>;
}
