// The model-based test of the client over the fetch transport and over an emulated wx.request
// (see client-model.ts). `npm test` runs a few hundred sequences; `npm run test:model`
// thousands (MODEL_RUNS), and MODEL_SEED replays a failure.
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { createClient as createFetchClient } from '../../src/index.js';
import { createClient as createMiniClient } from '../../src/miniprogram.js';
import type { HostRequestOptions } from '../../src/transports/host-api.js';
import { createHost } from '../helpers/hosts.js';
import { checkModel, type Coverage } from './client-model.js';

const runs = Number(process.env.MODEL_RUNS ?? 150);
const seed = process.env.MODEL_SEED === undefined ? undefined : Number(process.env.MODEL_SEED);
const timeout = Math.max(60_000, runs * 1_000);

const lines: string[] = [];
beforeEach(() => {
  lines.length = 0;
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
  }
});
afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * Every kind of interleaving was reached at least once (a model test that explores nothing
 * proves nothing), and no console line carried a token. Prints the counts under test:model.
 */
function problems(seen: Coverage): string[] {
  if (process.env.MODEL_RUNS) process.stdout.write(`model coverage over ${runs} runs: ${JSON.stringify(seen)}\n`);
  const out = Object.entries(seen)
    .filter(([, count]) => count === 0)
    .map(([what]) => 'never reached: ' + what);
  // The client never logs; a console line with a token would be a leak all the same.
  if (lines.some((line) => /eyJ[\w-]+\.[\w-]+\./.test(line))) out.push('a console line carried a token');
  return out;
}

test(`model: fetch transport, ${runs} random interleavings keep every promise`, async () => {
  const seen = await checkModel(
    (options, record) =>
      createFetchClient({
        ...options,
        fetch: (input, init) => {
          const headers = input instanceof Request ? input.headers : new Headers(init?.headers);
          record(Object.fromEntries(headers));
          return fetch(input, init);
        },
      }),
    runs,
    seed,
  );
  expect(problems(seen)).toEqual([]);
}, timeout);

test(`model: mini-program transport over wx.request, ${runs} random interleavings keep every promise`, async () => {
  const seen = await checkModel((options, record) => {
    const host = createHost('wx');
    return createMiniClient({
      ...options,
      request: (o: HostRequestOptions) => {
        record(o.header);
        return host.request(o);
      },
    });
  }, runs, seed);
  expect(problems(seen)).toEqual([]);
}, timeout);
