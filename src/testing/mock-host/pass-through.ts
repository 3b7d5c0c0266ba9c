// createMockHost's `passThrough` (issue #46): the calls to these origins (the sandbox, the
// partner's backend) leave the process over real HTTP, so that a page test meets the real token
// route, the real 401s and the real file routes. Everything the host itself does stays the mock's
// (mock-calls.ts): the callback shapes, errMsg, the header case, the limit of calls in flight,
// abort and timeout; this module only carries one call's bytes there and back.
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { fail } from '../../shared/check.js';
import type { WireAnswer } from './host-answers.js';
import { CallFailure, type Outgoing } from './mock-calls.js';

/** The `passThrough` option checked: a set of origins (`http://127.0.0.1:8787`), each as `URL.origin` writes it. */
export function passThroughOrigins(value: unknown): Set<string> {
  const example = "e.g. ['http://127.0.0.1:8787', 'http://127.0.0.1:3000'] (the sandbox, your backend)";
  if (value === undefined) return new Set();
  if (!Array.isArray(value)) fail(`createMockHost passThrough must be a list of origins, ${example}`);
  return new Set(
    value.map((origin: unknown) => {
      let parsed: URL | undefined;
      try {
        parsed = typeof origin === 'string' ? new URL(origin) : undefined;
      } catch {
        // said below
      }
      if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== String(origin).replace(/\/$/, ''))
        fail(`createMockHost passThrough: ${JSON.stringify(origin)} is not an origin (scheme, host and port, no path), ${example}`);
      return parsed.origin;
    }),
  );
}

/**
 * Sends one call over real HTTP and resolves to the answer as the host receives it. `request`
 * sends its body with WeChat's default `content-type: application/json`; `uploadFile` sends the
 * file as multipart/form-data (its `formData` fields first), as the hosts do. A refused or reset
 * connection fails the call as the host's network failure (`request:fail …`); the call's signal
 * (its abort, its timeout) drops the connection. The first refused connection to an origin (kept
 * in `refused`) is said once on stderr: a page shows only an error code, and a page test run
 * without the sandbox or the backend would otherwise fail on an empty list, saying nothing.
 */
export function sendOver(outgoing: Outgoing, refused: Set<string>): Promise<WireAnswer> {
  const { api, method, url, signal } = outgoing;
  const headers: Record<string, string> = { ...outgoing.headers };
  let body: Uint8Array = outgoing.body;
  if (outgoing.file) {
    const boundary = '----MockHostFormBoundary' + randomBytes(8).toString('hex');
    body = multipart(boundary, outgoing.file);
    headers['content-type'] = 'multipart/form-data; boundary=' + boundary;
  } else if (api === 'request') headers['content-type'] ??= 'application/json';
  if (body.length || method === 'POST' || method === 'PUT' || method === 'PATCH') headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new CallFailure('abort', 'abort'));
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    // No keep-alive: a test that ends leaves no socket behind to hold its process open.
    const req = send(url, { method, headers, agent: false }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const raw = res.rawHeaders;
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i], raw[i + 1]]);
        resolve({ status: res.statusCode ?? 0, headers: pairs, body: new Uint8Array(Buffer.concat(chunks)) });
      });
      res.on('error', () => reject(new CallFailure('interrupted', 'interrupted')));
    });
    const drop = () => req.destroy();
    signal?.addEventListener('abort', drop, { once: true });
    req.on('close', () => signal?.removeEventListener('abort', drop));
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (signal?.aborted) reject(new CallFailure('abort', 'abort'));
      else {
        if (error.code === 'ECONNREFUSED' && !refused.has(url.origin)) {
          refused.add(url.origin);
          console.warn(
            `[channel-sdk] createMockHost: nothing listens at ${url.origin} (ECONNREFUSED), one of its passThrough origins: ` +
              'start it before the test (the sandbox: npx channel-sandbox start --port <its port>; your backend), or leave it out of passThrough to have the host answer in memory',
          );
        }
        reject(new CallFailure('network', `${error.code ?? error.message} (passThrough: ${method} ${url.origin})`));
      }
    });
    req.end(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  });
}

/** An upload's body: each `formData` field, then the file, as a host's uploadFile sends them. */
function multipart(boundary: string, file: NonNullable<Outgoing['file']>): Uint8Array {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(file.formData))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    Buffer.from(file.bytes),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return new Uint8Array(Buffer.concat(parts));
}
