// The model-based test of the client over the fetch transport and over an emulated wx.request
// (see client-model.ts). `npm test` runs a hundred sequences; `npm run test:model`
// thousands (MODEL_RUNS). A failure prints its seed, the shrunk sequence, what the client did in
// it, and the line that replays it (MODEL_SEED, MODEL_PATH, MODEL_REPLAY): see checkModel.
import { afterEach, beforeEach, expect, onTestFailed, test, vi } from 'vitest';
import { createClient as createFetchClient } from '../../src/index.js';
import { createClient as createMiniClient } from '../../src/miniprogram.js';
import type { HostRequestOptions } from '../../src/transports/miniprogram/host-api.js';
import { createHost } from '../helpers/hosts.js';
import { checkModel, noCoverage, type Batch, type Coverage, type ModelClientFactory } from './client-model.js';

// A short run in npm test; `npm run test:model` (in verify) runs 2,000 per transport.
const runs = Number(process.env.MODEL_RUNS ?? 50);
// MODEL_SEED alone runs that batch again (and shrinks again); with MODEL_PATH and MODEL_REPLAY
// (fast-check's path to the shrunk sequence, and which of its commands ran) it runs the shrunk
// sequence alone, at once.
const given = process.env.MODEL_SEED === undefined ? undefined : Number(process.env.MODEL_SEED);
const path = process.env.MODEL_PATH;
const replayPath = process.env.MODEL_REPLAY;
// A rare interleaving (a 401 to a token already replaced) is reached by chance: a batch that
// misses one is followed by another, up to `rounds`, so the coverage check asks for exploration
// without failing on chance. Every batch checks every invariant. A replayed seed runs one batch.
const rounds = given === undefined ? 5 : 1;
const timeout = Math.max(60_000, runs * 1_000) * rounds;

/** The command line that runs a batch of the test `name` (a -t filter) again, or with `path` its shrunk sequence. */
const replayLine = (name: string) => (batch: Batch) =>
  [
    `MODEL_SEED=${batch.seed}`,
    ...(batch.path ? [`MODEL_PATH=${batch.path}`, `MODEL_REPLAY='${batch.replayPath ?? ''}'`] : [`MODEL_RUNS=${batch.runs}`]),
    `npx vitest run test/model -t '${name}'`,
  ].join(' ');

/** The test under way: its -t filter, the batches it ran, whether a failure already printed its report. */
let current: { name: string; batches: Batch[]; reported: boolean } = { name: '', batches: [], reported: false };

/** Runs batches of `runs` sequences until every kind of interleaving was reached (at most `rounds`). */
async function explore(name: string, factory: ModelClientFactory): Promise<Coverage> {
  current.name = name;
  const total = noCoverage();
  for (let round = 0; round < rounds && (round === 0 || Object.values(total).some((count) => count === 0)); round++) {
    // Drawn here as fast-check would, so that the seed is known whatever way the batch ends.
    const seed = round === 0 && given !== undefined ? given : (Date.now() ^ (Math.random() * 0x1_0000_0000)) | 0;
    const batch: Batch = { seed, runs, ...(path ? { path, replayPath } : {}) };
    current.batches.push(batch);
    const seen = await checkModel(factory, batch, replayLine(name)).catch((error: unknown) => {
      current.reported = true;
      throw error;
    });
    for (const key of Object.keys(total) as Array<keyof Coverage>) total[key] += seen[key];
  }
  return total;
}

const lines: string[] = [];
beforeEach(() => {
  lines.length = 0;
  current = { name: '', batches: [], reported: false };
  // A failure without a report of its own (a coverage shortfall, the test's timeout) names the batches that ran.
  onTestFailed(() => {
    if (current.reported) return;
    process.stderr.write(`model test failed; its batches, each run again by:\n${current.batches.map((b) => '  ' + replayLine(current.name)(b)).join('\n')}\n`);
  });
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
  }
});
afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * Every kind of interleaving was reached at least once (a model test that explores nothing
 * proves nothing; a replayed sequence is one run and is not asked to), and no console line
 * carried a token. Prints the counts under test:model.
 */
function problems(seen: Coverage): string[] {
  if (process.env.MODEL_RUNS) process.stdout.write(`model coverage over ${runs} runs: ${JSON.stringify(seen)}\n`);
  const out = Object.entries(seen)
    .filter(([, count]) => count === 0 && !path)
    .map(([what]) => 'never reached: ' + what);
  // The client never logs; a console line with a token would be a leak all the same.
  if (lines.some((line) => /eyJ[\w-]+\.[\w-]+\./.test(line))) out.push('a console line carried a token');
  return out;
}

test(
  `model: fetch transport, ${runs} random interleavings keep every promise`,
  async () => {
    const seen = await explore('fetch transport', (options, record) =>
      createFetchClient({
        ...options,
        fetch: (input, init) => {
          const headers = input instanceof Request ? input.headers : new Headers(init?.headers);
          record(Object.fromEntries(headers));
          return fetch(input, init);
        },
      }),
    );
    expect(problems(seen)).toEqual([]);
  },
  timeout,
);

test(
  `model: mini-program transport over wx.request, ${runs} random interleavings keep every promise`,
  async () => {
    const seen = await explore('mini-program transport', (options, record) => {
      const host = createHost('wx');
      return createMiniClient({
        ...options,
        request: (o: HostRequestOptions) => {
          record(o.header);
          return host.request(o);
        },
      });
    });
    expect(problems(seen)).toEqual([]);
  },
  timeout,
);
