// @vitest-environment node
/**
 * Tokens in schema errors and re-formatted echoes (issue #29 item 7), over the fetch transport on
 * Node and the wx and my host emulations: a 2xx whose data echoes the token and fails the schema
 * (the real valibot and zod, whose messages may quote the value), a schema that throws with it,
 * and error bodies that echo the token's `payload.signature` part (with the constant HS256 header,
 * that part is the credential) or the token folded over lines. No string reachable from the
 * error or the events holds the credential, however it was re-formatted.
 */
import { describe, expect, test } from 'vitest';
import * as v from 'valibot';
import { z } from 'zod';
import type { Client } from '../../src/core/client.js';
import type { CoreClientOptions } from '../../src/core/types.js';
import { createClient as createBrowserClient } from '../../src/index.js';
import { createClient as createMiniProgramClient } from '../../src/miniprogram.js';
import { HttpError, ResponseError } from '../../src/errors/index.js';
import { makeJwt } from '../helpers/fake-service.js';
import { createRedactor } from '../../src/core/redactor.js';
import { createHost } from '../helpers/hosts.js';
import { collectStrings } from '../helpers/scan.js';
import { sendJson, startServer } from '../helpers/server.js';
import { closedAfterEach } from './suite.js';

const transports: Array<[string, (options: CoreClientOptions) => Client]> = [
  ['fetch (ky) on Node', (options) => createBrowserClient(options)],
  ['wx.request', (options) => createMiniProgramClient({ ...options, request: createHost('wx').request })],
  ['my.request', (options) => createMiniProgramClient({ ...options, request: createHost('my').request })],
];

/** `text` without what a re-formatting puts between a token's characters: whitespace, and its JSON escapes. */
const squeeze = (text: string) => text.replace(/\s+|\\[nrt]/g, '');

/**
 * The credential's pieces found in any string reachable from `values`, however folded: a 12-character
 * run of the signature, or of the `payload.signature` seam.
 */
function leaks(values: unknown, token: string): string[] {
  const [, payload, signature] = token.split('.');
  const seam = payload.slice(-6) + '.' + signature.slice(0, 6);
  const pieces = [seam];
  for (let i = 0; i + 12 <= signature.length; i += 4) pieces.push(signature.slice(i, i + 12));
  const found: string[] = [];
  for (const s of collectStrings(values)) for (const piece of pieces) if (squeeze(s).includes(piece)) found.push(piece + ' in ' + s.slice(0, 200));
  return found;
}

describe.each(transports)('no token in schema errors or re-formatted echoes, over %s (#29 item 7)', (_name, createClient) => {
  const closing = closedAfterEach();
  // A long HS256 token: header.payload.signature, the signature 43 characters as HS256 gives.
  const token = makeJwt({ sub: 'user-1', iat: 1, exp: 2e9 }).replace(/\.[^.]*$/, '.Qk7x_Rb-2mZ9aP4dLw8sT1vYc6nE0hGjU3oKqXiB5fF');
  const [, payload, signature] = token.split('.');

  async function echoing() {
    const server = closing(
      await startServer((req, res) => {
        const bearer = String(req.headers.authorization).slice(7);
        const [, p, s] = bearer.split('.');
        switch (req.url) {
          case '/data':
            return sendJson(res, 200, { code: 0, data: { token: bearer, user: 'user-1' } });
          case '/part':
            return sendJson(res, 400, { error: 'signature check failed for ' + p + '.' + s });
          case '/signature':
            return sendJson(res, 400, { error: 'bad signature ' + s });
          case '/folded':
            // A mail- or PEM-style fold: the token over lines of 40 characters, continuation indented.
            return void res.writeHead(400, { 'content-type': 'text/plain' }).end('rejected:\r\n ' + bearer.match(/.{1,40}/g)!.join('\r\n '));
          case '/folded-json':
            // The same fold inside a JSON string: its line breaks are JSON escapes in the body.
            return sendJson(res, 400, { error: 'rejected: ' + bearer.match(/.{1,50}/g)!.join('\n  ') });
          default:
            return sendJson(res, 404, { error: 'no route' });
        }
      }),
    );
    const client = createClient({ baseUrl: server.url, tokenProvider: () => token, retry: 0 });
    const events: unknown[] = [];
    client.on('*', (_type, event) => events.push(event));
    return { client, events };
  }

  test.each([
    ['valibot (its default message quotes the value)', () => v.object({ token: v.number(), user: v.string() })],
    ['valibot, a string check (quotes the value)', () => v.object({ token: v.pipe(v.string(), v.email()), user: v.string() })],
    [
      'zod 4, a message quoting the input',
      () => z.object({ token: z.string().refine(() => false, { error: (issue) => 'not a session id: ' + String(issue.input) }) }),
    ],
  ])('a 2xx echoing the token that %s rejects: not in the message, the issues or the error event', async (_schemaName, schema) => {
    const { client, events } = await echoing();
    const error = await client.get('/data', { schema: schema() as never }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseError);
    expect((error as ResponseError).issues?.length).toBeGreaterThan(0);
    expect(leaks([error, events], token)).toEqual([]);
    expect((error as Error).message).toMatch(/\[token\]/);
  });

  test('a schema that throws with the token in its message: not in the ResponseError, its cause or the error event', async () => {
    const { client, events } = await echoing();
    const schema = {
      '~standard': {
        version: 1 as const,
        vendor: 'test',
        validate: (value: unknown) => {
          throw new Error('cannot read ' + JSON.stringify(value));
        },
      },
    };
    const error = await client.get('/data', { schema }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseError);
    expect((error as Error).message).toMatch(/the schema threw/);
    expect(leaks([error, events], token)).toEqual([]);
  });

  test.each([
    ['its payload.signature part', '/part'],
    ['its signature alone', '/signature'],
    ['the token folded over lines', '/folded'],
    ['the token folded inside a JSON string', '/folded-json'],
  ])('an error body echoing %s: HttpError.body, message and events hold no piece of the credential', async (_what, path) => {
    const { client, events } = await echoing();
    const error = await client.get(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).body).toMatch(/\[token\]/);
    expect(leaks([error, events], token)).toEqual([]);
    // The rest of the body stays readable.
    expect((error as HttpError).body).toMatch(/signature check failed for|bad signature|rejected/);
    expect(payload.length + signature.length).toBeGreaterThan(60);
  });
});

test('a long error body without a dot is redacted in linear time (the former [\\w-]*eyJ pattern backtracked: 100 KB took minutes)', async () => {
  const token = makeJwt({ sub: 'user-1', iat: 1, exp: 2e9 });
  const server = await startServer((_req, res) => void res.writeHead(500, { 'content-type': 'text/plain' }).end('x'.repeat(1_000_000) + ' ' + token));
  try {
    const client = createBrowserClient({ baseUrl: server.url, tokenProvider: () => token, retry: 0 });
    // The default test timeout (20 s) is the slack: the old pattern needed hours for a megabyte.
    const error = (await client.get('/big').catch((e: unknown) => e)) as HttpError;
    expect(error).toBeInstanceOf(HttpError);
    expect(error.body).toHaveLength(1000);
  } finally {
    await server.close();
  }
});

test('the redactor: an opaque token (not three parts) is cut whole, also folded; the surrounding text stays', () => {
  const redact = createRedactor();
  redact.remember('');
  redact.remember('opaque+token/with.dots$1234567890');
  expect(redact.text('a opaque+token/with.dots$1234567890 b')).toBe('a [token] b');
  expect(redact.text('a opaque+token/wi\n  th.dots$1234567890 b')).toBe('a [token] b');
  expect(redact.text('nothing to cut here')).toBe('nothing to cut here');
});
