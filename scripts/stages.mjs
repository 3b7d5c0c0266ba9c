// Runs a list of stages (package.json scripts or commands) one by one for `npm test` and
// `npm run verify`: each stage prints one line when it ends; its output is kept back and shown
// whole only if it fails, so a passing run is a short report and a real failure stands out
// (issue #12). While a stage runs, progress lines show it is alive: each test file as vitest
// finishes it, else a line a minute.
import { spawn } from 'node:child_process';

/**
 * @typedef {object} Stage
 * @property {string} name the package.json script, or a label when `command` is given
 * @property {string} what one line on what it checks
 * @property {string[]} [command] a command to run instead of `npm run <name>`
 * @property {Record<string, string>} [env] extra environment
 * @property {(output: string) => string[]} [summary] lines to print after it passed
 */

// vitest's line for a finished file: " ✓  node  test/core/url.test.ts (5 tests) 12ms".
const fileDone = /^\s*(✓|×|↓)\s+(?:\S+\s+)?(test\/\S+)\s+\((\d+) tests?(?:[^)]*)\)\s*(\d+m?s)?/;

function run(stage) {
  return new Promise((resolve) => {
    const [bin, ...args] = stage.command || ['npm', 'run', '--silent', stage.name];
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', ...stage.env } });
    let output = '';
    let partial = '';
    let lastProgress = Date.now();
    const started = Date.now();
    const heartbeat = setInterval(() => {
      if (Date.now() - lastProgress >= 60_000) {
        lastProgress = Date.now();
        process.stdout.write(`    … ${stage.name} still running (${Math.round((Date.now() - started) / 1000)} s)\n`);
      }
    }, 5_000);
    const take = (chunk) => {
      const text = String(chunk);
      output += text;
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines.map(plain)) {
        const m = fileDone.exec(line);
        if (!m) continue;
        lastProgress = Date.now();
        process.stdout.write(`    ${m[1]} ${m[2]} (${m[3]} tests${m[4] ? ', ' + m[4] : ''})\n`);
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('close', (code) => {
      clearInterval(heartbeat);
      resolve({ code, output: plain(output) });
    });
  });
}

// eslint-disable-next-line no-control-regex -- colour codes some tools print anyway
const plain = (text) => text.replace(/\x1b\[[0-9;]*m/g, '');

/**
 * Runs `stages` in order; exits with the first failure's code after printing its output. A stage
 * `{ parallel: [...] }` runs its stages at once (they must not depend on each other): `npm test`'s
 * checks mostly wait on I/O and timers, so on 2 cores they overlap well.
 */
export async function runStages(title, stages) {
  const started = Date.now();
  const count = stages.reduce((n, stage) => n + (stage.parallel ? stage.parallel.length : 1), 0);
  process.stdout.write(`${title}: ${count} stages\n`);
  for (const stage of stages) {
    const group = stage.parallel || [stage];
    for (const one of group) process.stdout.write(`▶ ${one.name}: ${one.what}\n`);
    const results = await Promise.all(
      group.map(async (one) => {
        const t = Date.now();
        const { code, output } = await run(one);
        const seconds = ((Date.now() - t) / 1000).toFixed(1);
        if (code === 0) process.stdout.write(`✓ ${one.name} ${seconds} s\n`);
        return { one, code, output, seconds };
      }),
    );
    const failed = results.find((r) => r.code !== 0);
    if (failed) {
      process.stdout.write(`\n✗ ${failed.one.name} failed after ${failed.seconds} s; its output:\n\n${failed.output}\n`);
      process.exit(failed.code ?? 1);
    }
    for (const { one, output } of results)
      if (one.summary)
        process.stdout.write(
          one
            .summary(output)
            .map((line) => '    ' + line + '\n')
            .join(''),
        );
  }
  process.stdout.write(`\n${title} passed in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

/** The test counts of a vitest run, and any skipped file by name (on a set-up machine there is none). */
export function vitestSummary(output) {
  const lines = output.split('\n');
  const counts = lines.filter((line) => /^\s*(Test Files|Tests|Errors)\s/.test(line)).map((line) => line.trim());
  const skipped = lines.filter((line) => line.includes('↓') || /\d+ skipped\)/.test(line)).map((line) => 'skipped in: ' + line.replace('↓', '').trim());
  return [...counts, ...skipped];
}
