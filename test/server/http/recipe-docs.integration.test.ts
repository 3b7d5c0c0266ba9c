// The backend recipes as users read them: README.md shows the setup and Express, and
// docs/guide/webhooks.md the other frameworks. Every recipe is shown, each `example:` block is its
// file verbatim, and every `check` block of docs/guide/webhooks.md type-checks on its own (strict,
// exactOptionalPropertyTypes) against the built package (README's blocks: test/readme).
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { readmeBlocks, syncExamples } from '../../../scripts/readme.mjs';

const root = resolve(import.meta.dirname, '../../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const docs = readFileSync(join(root, 'docs/guide/webhooks.md'), 'utf8');
const blocks = readmeBlocks(docs).filter((b) => b.lang === 'ts');
const shown = [...readmeBlocks(readme), ...blocks].filter((b) => b.marker === 'example').map((b) => b.argument);
const recipes = [
  'examples/backend/channel.ts',
  'examples/backend/express.ts',
  'examples/backend/fastify.ts',
  'examples/backend/koa.ts',
  'examples/backend/hono.ts',
  'examples/backend/nextjs/app/webhooks/channel/route.ts',
  'examples/backend/nextjs/app/channel-token/route.ts',
  'examples/backend/nextjs/pages/api/webhooks/channel.ts',
  'examples/backend/nextjs/pages/api/channel-token.ts',
  'examples/backend/webhook-inbox.ts',
  'examples/backend/webhook-inbox-bullmq.ts',
];

test('README.md and docs/guide/webhooks.md show every recipe, each block verbatim from its file; no block unmarked', () => {
  expect(recipes.filter((recipe) => !shown.includes(recipe))).toEqual([]);
  expect(syncExamples(docs) === docs ? 'verbatim' : 'a block of docs/guide/webhooks.md differs from its example file: npm run readme').toBe('verbatim');
  expect(blocks.filter((b) => !b.marker).map((b) => 'docs/guide/webhooks.md:' + b.line)).toEqual([]);
});

test("docs/guide/webhooks.md's check blocks type-check on their own", async () => {
  const dir = join(root, '.tmp', 'recipe-docs-check');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const strict = { strict: true, exactOptionalPropertyTypes: true, noEmit: true, skipLibCheck: true, target: 'ES2022' };
  const files = { web: [] as string[], node: [] as string[] };
  blocks
    .filter((b) => b.marker === 'check')
    .forEach((b) => {
      const project = /channel-sdk\/server|\bnode:|\bprocess\./.test(b.code) ? 'node' : 'web';
      writeFileSync(join(dir, `${project}-line-${b.line}.ts`), b.code);
      files[project].push(`${project}-line-${b.line}.ts`);
    });
  const configs = {
    web: { compilerOptions: { ...strict, module: 'ESNext', moduleResolution: 'bundler', lib: ['ES2022', 'DOM'], types: [] }, files: files.web },
    node: { compilerOptions: { ...strict, module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022'], types: ['node'] }, files: files.node },
  };
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  for (const [name, config] of Object.entries(configs)) {
    if (!config.files.length) continue;
    writeFileSync(join(dir, `tsconfig.${name}.json`), JSON.stringify(config));
    const result = await promisify(execFile)(process.execPath, [tsc, '-p', join(dir, `tsconfig.${name}.json`)]).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    );
    expect({ project: name, errors: result }).toEqual({ project: name, errors: '' });
  }
  rmSync(dir, { recursive: true, force: true });
});
