// @vitest-environment node
/**
 * createMockHost answers as the suite's emulations over real HTTP (test/helpers/hosts.ts) do, host
 * by host: the same callback (success or fail) with the same result for the same server answer.
 * Both build their results with src/testing/mock-host/host-answers.ts; this checks what each adds
 * around it (the body's way in, dataType, responseType, statuses, headers).
 */
import { HOST_NAMES } from '../../../src/transports/miniprogram/host-globals.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createMockHost, type MockAnswer } from '../../../src/testing.js';
import { createHost } from '../../helpers/hosts.js';
import { startServer, type TestServer } from '../../helpers/server.js';

const answers: Record<string, MockAnswer> = {
  '/json': { status: 200, headers: { 'content-type': 'application/json' }, body: { code: 0, data: { n: 1 } } },
  '/unauthorized': { status: 401, headers: { 'content-type': 'application/json' }, body: { code: 40100, message: 'token expired' } },
  '/text': { status: 404, headers: { 'content-type': 'text/plain' }, body: 'no such page' },
  '/bytes': { status: 200, headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array([0, 1, 254, 255]) },
};
const cases: Array<[path: string, options: Record<string, unknown>]> = [
  ['/json', {}],
  ['/json', { dataType: 'text' }],
  ['/unauthorized', {}],
  ['/text', {}],
  ['/text', { dataType: 'text' }],
  ['/bytes', { responseType: 'arraybuffer', dataType: 'text' }],
  ['/json', { method: 'POST', data: '{"a":1}', header: { 'content-type': 'application/json' } }],
];

let server: TestServer;
beforeAll(async () => {
  server = await startServer((req, res) => {
    const answer = answers[String(req.url)];
    const body = answer.body instanceof Uint8Array ? answer.body : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    res.writeHead(answer.status ?? 200, answer.headers).end(body);
  });
});
afterAll(() => server.close());

/** What a host called back with, without the headers it may add (Date, Connection…) but with the content type. */
async function outcome(host: { request(o: object): unknown }, url: string, options: Record<string, unknown>) {
  const result = await new Promise<[string, Record<string, unknown>]>((resolve) =>
    host.request({ url, ...options, success: (r: object) => resolve(['success', { ...r }]), fail: (r: object) => resolve(['fail', { ...r }]) }),
  );
  const [kind, r] = result;
  const headers = (r.header ?? r.headers) as Record<string, string> | undefined;
  delete r.header;
  delete r.headers;
  if (r.data instanceof ArrayBuffer) r.data = [...new Uint8Array(r.data)];
  const type = headers && Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type');
  return [kind, r, type];
}

describe('createMockHost answers as the emulations over real HTTP do', () => {
  for (const kind of HOST_NAMES) {
    test(`${kind}.request: ${cases.length} answers, the same callback and result`, async () => {
      const emulated = createHost(kind);
      const mock = createMockHost({ kind, routes: Object.fromEntries(Object.entries(answers).map(([path, answer]) => [path, () => answer])) });
      for (const [path, options] of cases) {
        const real = await outcome(emulated, server.url + path, options);
        expect({ path, options, mock: await outcome(mock, 'https://api.example.com' + path, options) }).toEqual({ path, options, mock: real });
      }
    });
  }
});
