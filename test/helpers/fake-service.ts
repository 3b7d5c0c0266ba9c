import type { ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { sendJson, startServer, type TestServer } from './server.js';

/** A file as the fake service's `/upload` route received it. */
export interface UploadedFile {
  field: string;
  filename: string;
  type: string;
  size: number;
  sha256: string;
}

/** The bytes `/download/<n>` answers: byte i is i % 251 (a prime, so no run repeats at a power of two). */
export function patternBytes(n: number): Buffer {
  const bytes = Buffer.alloc(n);
  for (let i = 0; i < n; i++) bytes[i] = i % 251;
  return bytes;
}

/** A clock shared by the fake service and (optionally skewed) clients. */
export interface Clock {
  now(): number;
  advance(ms: number): void;
}

export function createClock(start = Date.UTC(2026, 0, 1)): Clock {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

export function base64url(value: string): string {
  return Buffer.from(value).toString('base64url');
}

/** A JWT-shaped token with `iat`/`exp` (the signature is random: this fake checks tokens by identity). */
export function makeJwt(claims: Record<string, unknown>): string {
  return `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify(claims))}.${base64url(Math.random().toString(36))}`;
}

/** A token route's answer for `sub`, issued now for 10 minutes, kept in `tokens` (the Chromium pages' `/token`). */
export function answerToken(res: ServerResponse, tokens: string[], sub = 'u1'): void {
  const iat = Math.floor(Date.now() / 1000);
  tokens.push(makeJwt({ sub, iat, exp: iat + 600 }));
  res.writeHead(200, { 'content-type': 'text/plain' }).end(tokens[tokens.length - 1]);
}

export interface Hit {
  method: string;
  path: string;
  token: string | undefined;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  status: number;
}

export interface FakeServiceOptions {
  /** Token lifetime in seconds. @default 900 */
  ttl?: number;
  /** Each new token revokes all older ones (stricter than the real service). */
  strictRotation?: boolean;
  clock?: Clock;
  /**
   * Send `Access-Control-Expose-Headers: Date, Retry-After`, so that a page on another origin
   * can read the `Date` header (which carries the service's clock, `clock`). @default true
   */
  exposeDate?: boolean;
  /** Ms the `Date` header runs ahead of `clock`, which issues and checks the tokens (a gateway's clock). @default 0 */
  dateAhead?: number;
  /** Issue tokens with `exp` but no `iat`. @default false */
  withoutIat?: boolean;
}

/**
 * A stand-in for the service over real HTTP. Data routes (any path) require a valid Bearer
 * token and answer `{ code: 0, data: { method, path, body } }`. Special paths:
 * `/status/<n>` answers n; `/envelope/<code>` answers a non-zero envelope; `/text` a non-JSON 200;
 * `/plain` a 200 JSON body without envelope; `/slow/<ms>` answers after ms; `/late401/<ms>` checks the token again after ms;
 * `/retry-after/<s>` answers 503 with that Retry-After; `/flaky/<n>` fails
 * its first n hits per body with 503; `/drop/<n>` destroys the socket for its first n hits.
 * Files: `/upload[/...]` parses a multipart body and answers `{ code: 0, data: { fields, files } }`
 * (each file: field, filename, type, size, sha256); `/download/<n>` answers n bytes (byte i is
 * i % 251) with a content-length, in 4 writes; `/slow-download/<n>/<ms>` writes 1 KiB every ms.
 */
export interface FakeService {
  url: string;
  hits: Hit[];
  /** Tokens issued so far, in order. */
  issued: string[];
  /** A token as the token endpoint issued it `ageSeconds` ago (a partner backend's cache hands out such tokens). */
  issue(userId?: string, ageSeconds?: number): string;
  /** Every token issued so far now gets 401. */
  expireAll(): void;
  /** The next n data calls answer 401 whatever the token. */
  rejectNext(n: number): void;
  /** Every call answers 401 from now on. */
  rejectAll(value: boolean): void;
  /**
   * `/late401/gate` requests wait at a gate before their token is checked: `arrived()` resolves once
   * one is waiting, `open()` lets them all through (a late check, ordered by the test, not by time).
   */
  gate: { arrived(): Promise<void>; open(): void };
  clock: Clock;
  close(): Promise<void>;
}

export async function startFakeService(options: FakeServiceOptions = {}): Promise<FakeService> {
  const ttl = options.ttl ?? 900;
  const clock = options.clock ?? { now: () => Date.now(), advance: () => {} };
  const valid = new Map<string, number>(); // token -> exp (epoch s)
  const issued: string[] = [];
  const hits: Hit[] = [];
  const counters = new Map<string, number>();
  let rejectNext = 0;
  let rejectAll = false;
  let openGate!: () => void;
  const gateOpen = new Promise<void>((resolve) => (openGate = resolve));
  let atGate!: () => void;
  const gateReached = new Promise<void>((resolve) => (atGate = resolve));

  const server: TestServer = await startServer(async (req, res) => {
    const path = req.url ?? '/';
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice(7) : undefined;
    const answer = (status: number, write: (r: ServerResponse) => void) => {
      hits.push({ method: req.method ?? '', path, token, body: req.body, headers: req.headers, status });
      // The service's clock, as an HTTP server sends it (whole seconds).
      res.setHeader('date', new Date(clock.now() + (options.dateAhead ?? 0)).toUTCString());
      if (options.exposeDate !== false) res.setHeader('access-control-expose-headers', 'Date, Retry-After');
      write(res);
    };
    const isValid = () => {
      const exp = token === undefined ? undefined : valid.get(token);
      return exp !== undefined && clock.now() / 1000 < exp;
    };
    const unauthorized = () => answer(401, (r) => sendJson(r, 401, { code: 401, message: 'invalid or expired token' }));
    if (rejectAll || rejectNext > 0 || !isValid()) {
      if (rejectNext > 0) rejectNext--;
      return unauthorized();
    }
    const [, kind, arg] = path.split('?')[0].split('/');
    const n = Number(arg);
    const seen = (counters.get(path + req.body) ?? 0) + 1;
    counters.set(path + req.body, seen);
    switch (kind) {
      case 'upload': {
        const form = await new Response(new Uint8Array(req.raw), { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
        const fields: Record<string, string> = {};
        const files: UploadedFile[] = [];
        for (const [field, value] of form) {
          if (typeof value === 'string') fields[field] = value;
          else {
            const bytes = Buffer.from(await value.arrayBuffer());
            files.push({ field, filename: value.name, type: value.type, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
          }
        }
        return answer(200, (r) => sendJson(r, 200, { code: 0, data: { path, fields, files } }));
      }
      case 'download':
        return answer(200, (r) => {
          const bytes = patternBytes(n);
          r.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
          const quarter = Math.ceil(bytes.length / 4) || 1;
          for (let i = 0; i < bytes.length; i += quarter) r.write(bytes.subarray(i, i + quarter));
          r.end();
        });
      case 'slow-download': {
        const every = Number(path.split('?')[0].split('/')[3]);
        return answer(200, (r) => {
          const bytes = patternBytes(n);
          r.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
          let at = 0;
          const timer = setInterval(() => {
            if (r.destroyed) return clearInterval(timer);
            r.write(bytes.subarray(at, (at += 1024)));
            if (at >= bytes.length) {
              clearInterval(timer);
              r.end();
            }
          }, every);
          r.on('close', () => clearInterval(timer));
        });
      }
      case 'status':
        return answer(n, (r) => sendJson(r, n, { error: 'status ' + n }, n === 429 || n === 503 ? { 'retry-after': '0' } : {}));
      case 'envelope':
        return answer(200, (r) => sendJson(r, 200, { code: n, message: 'business rule ' + n + ' failed' }));
      case 'text':
        return answer(200, (r) => r.writeHead(200, { 'content-type': 'text/html' }).end('<html>not json</html>'));
      case 'plain':
        return answer(200, (r) => sendJson(r, 200, { hello: 'world' }));
      case 'retry-after':
        return answer(503, (r) => sendJson(r, 503, { error: 'later' }, { 'retry-after': arg }));
      case 'late401':
        // Checks the token again after n ms (or once the test opens the gate), as a server whose check comes late would.
        if (arg === 'gate') {
          atGate();
          await gateOpen;
        } else await new Promise((resolve) => setTimeout(resolve, n));
        if (!isValid()) return unauthorized();
        break;
      case 'slow':
        await new Promise((resolve) => setTimeout(resolve, n));
        break;
      case 'flaky':
        if (seen <= n) return answer(503, (r) => sendJson(r, 503, { error: 'busy' }));
        break;
      case 'drop':
        if (seen <= n) return answer(0, (r) => r.socket?.destroy());
        break;
    }
    return answer(200, (r) => sendJson(r, 200, { code: 0, data: { method: req.method, path, body: req.body } }));
  });

  return {
    url: server.url,
    hits,
    issued,
    clock,
    issue(userId = 'user-1', ageSeconds = 0) {
      const iat = Math.floor(clock.now() / 1000) - ageSeconds;
      const token = makeJwt(
        options.withoutIat ? { sub: userId, exp: iat + ttl, jti: issued.length + 1 } : { sub: userId, iat, exp: iat + ttl, jti: issued.length + 1 },
      );
      if (options.strictRotation) valid.clear();
      valid.set(token, iat + ttl);
      issued.push(token);
      return token;
    },
    expireAll: () => valid.clear(),
    rejectNext: (count) => void (rejectNext = count),
    gate: { arrived: () => gateReached, open: () => openGate() },
    rejectAll: (value) => void (rejectAll = value),
    close: () => server.close(),
  };
}
