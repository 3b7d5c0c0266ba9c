// `npm test`: every stage in order, each one's output kept back and shown whole only if it
// fails, so a passing run is a short report (issue #12: a real failure must stand out).
// The stages are the package.json scripts of the same names.
import { spawn } from 'node:child_process';

const stages = [
  ['typecheck', 'TypeScript 7, and the mini-program sources against ES2015 + the WeChat typings'],
  ['lint', 'oxlint'],
  ['format:check', 'prettier --check: one formatter for every source file'],
  ['build', 'rollup and the WeChat bundle'],
  ['typecheck:examples', 'the backend recipes and type tests against the build, TypeScript 7 and 5.9'],
  ['test:unit', 'vitest'],
  ['size', 'size budgets'],
  ['check:package', 'publint --strict, arethetypeswrong'],
];

function run(script) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' } });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    // eslint-disable-next-line no-control-regex -- colour codes some tools print anyway
    child.on('close', (code) => resolve({ code, output: output.replace(/\x1b\[[0-9;]*m/g, '') }));
  });
}

const started = Date.now();
for (const [script, what] of stages) {
  const t = Date.now();
  const { code, output } = await run(script);
  const seconds = ((Date.now() - t) / 1000).toFixed(1);
  if (code !== 0) {
    process.stdout.write(`\n✗ ${script} (${what}) failed after ${seconds} s; its output:\n\n${output}\n`);
    process.exit(code ?? 1);
  }
  process.stdout.write(`✓ ${script} (${what}) ${seconds} s\n`);
  // What a reader of a passing run wants: the test counts and the sizes.
  if (script === 'test:unit') {
    const summary = output.split('\n').filter((line) => /^\s*(Test Files|Tests|Errors)\s/.test(line));
    process.stdout.write(summary.map((line) => '    ' + line.trim()).join('\n') + '\n');
    // A skip is visible, with its name: on a set-up machine there should be none.
    const skipped = output.split('\n').filter((line) => line.includes('↓') || /\d+ skipped\)/.test(line));
    if (skipped.length) process.stdout.write(skipped.map((line) => '    skipped in: ' + line.replace('↓', '').trim()).join('\n') + '\n');
  }
  if (script === 'size')
    process.stdout.write(
      output
        .split('\n')
        .filter((line) => line.startsWith('|'))
        .map((line) => '    ' + line)
        .join('\n') + '\n',
    );
}
process.stdout.write(`\nnpm test passed in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
