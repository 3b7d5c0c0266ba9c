/**
 * Every ts/js block of README.md is a test (issue #12). A block is either an example file shown
 * verbatim (`<!-- example: examples/x.ts -->`; `npm run readme` copies them in) or marked
 * type-check-only (`<!-- check -->`, `<!-- check: client -->` when it uses a client). All of
 * them, and every file in examples/, are type-checked under strict TypeScript with
 * exactOptionalPropertyTypes, with the TypeScript users mostly run (5.9) and the repo's (7),
 * against the built package resolved by its name. Each example file is run by a test
 * (test/readme/examples.test.ts and the feature tests that name it).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { documents, readmeBlocks, syncExamples } from '../../scripts/readme.mjs';

const readme = readFileSync('README.md', 'utf8');
// The README and the guides whose example blocks are synced (scripts/readme.mjs): an example
// moved from the README into a guide stays shown, checked and run.
// Every other guide too: a ts/js block in a guide that shows no example file is still a block a
// reader copies, so it is marked and type-checked like the rest.
const guides = readdirSync('docs/guide').map((name) => 'docs/guide/' + name);
const texts = Object.fromEntries([...new Set([...(documents as string[]), ...guides])].map((file) => [file, readFileSync(file, 'utf8')]));
const blocks = Object.entries(texts).flatMap(([file, text]) => readmeBlocks(text).map((b) => Object.assign(b, { file })));
const codeBlocks = blocks.filter((b) => /^(ts|js|typescript|javascript|tsx|jsx)$/.test(b.lang));
const examples = readdirSync('examples').filter((f) => /\.(ts|js)$/.test(f));

test('the README is a manual of at most 450 lines (a 15-minute read), without section numbers of a document users do not have', () => {
  expect(readme.split('\n').length).toBeLessThanOrEqual(450);
  expect(readme.match(/§\s*\d[\d.]*/g)).toBeNull();
  expect(readme).not.toMatch(/PLACEHOLDER/);
});

test('every ts/js block is an example file shown verbatim, or marked type-check-only (README and every guide)', () => {
  expect(codeBlocks.filter((b) => !b.marker).map((b) => b.file + ':' + b.line)).toEqual([]);
  for (const [file, text] of Object.entries(texts))
    expect(syncExamples(text) === text ? file + ' in sync' : file + ': run `npm run readme`: a block differs from its example file').toBe(file + ' in sync');
});

test('every example file is shown in the README or a synced guide, and run by a test', () => {
  const shown = codeBlocks.filter((b) => b.marker === 'example').map((b) => (b.argument ?? '').replace(/^examples\//, ''));
  const tests = readdirSync('test', { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
    .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))
    .join('\n');
  for (const file of examples) {
    expect({ file, shown: shown.includes(file) }).toEqual({ file, shown: true });
    expect({ file, run: tests.includes('examples/' + file) || tests.includes(`'${file}'`) }).toEqual({ file, run: true });
  }
});

/**
 * Three projects, as users have them: a web app (DOM, bundler resolution), a Node backend
 * (NodeNext) and a WeChat mini-program (CommonJS JavaScript with checkJs, the host typings).
 * They live in .readme-check/ inside the repository, so `channel-sdk` resolves to the built
 * package by its own name, through package.json `exports`.
 */
function writeProjects(): Record<string, string> {
  const dir = '.readme-check';
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'web'), { recursive: true });
  mkdirSync(join(dir, 'node'), { recursive: true });
  const strict = { strict: true, exactOptionalPropertyTypes: true, noEmit: true, skipLibCheck: true, target: 'ES2022', noUnusedLocals: false };
  codeBlocks
    // docs/guide/webhooks.md's check blocks are type-checked with their own set-up (test/server/http/recipe-docs).
    .filter((b) => b.marker === 'check' && b.file !== 'docs/guide/webhooks.md')
    .forEach((b, i) => {
      const prelude = (b.argument ?? '').split(/[\s,]+/).includes('client') ? "declare const client: import('channel-sdk').Client;\n" : '';
      // Each block is a module of its own, in the Node project when it uses Node or a server
      // entry; the line number maps an error back to the README.
      const project = /channel-sdk\/(server|testing)|\bnode:|\bprocess\./.test(b.code) ? 'node' : 'web';
      writeFileSync(join(dir, project, `${b.file.replace(/\W+/g, '-')}-line-${b.line}-${i}.ts`), prelude + b.code + '\nexport {};\n');
    });
  const mini = examples.filter((f) => f.startsWith('miniprogram-'));
  mkdirSync(join(dir, 'mini'), { recursive: true });
  // A mini-program's page files are CommonJS: .cjs keeps them so inside this ESM package.
  for (const f of mini) writeFileSync(join(dir, 'mini', f.replace(/\.js$/, '.cjs')), readFileSync(join('examples', f)));
  const projects = {
    web: {
      compilerOptions: { ...strict, module: 'ESNext', moduleResolution: 'bundler', lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [] },
      include: ['web/*.ts', ...examples.filter((f) => f.startsWith('browser-')).map((f) => '../examples/' + f)],
    },
    node: {
      compilerOptions: { ...strict, module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022'], types: ['node'] },
      include: ['node/*.ts', ...examples.filter((f) => !/^(browser|miniprogram)-/.test(f)).map((f) => '../examples/' + f)],
    },
    mini: {
      compilerOptions: {
        ...strict,
        module: 'Node16',
        moduleResolution: 'Node16',
        allowJs: true,
        checkJs: true,
        lib: ['ES2017'],
        types: ['miniprogram-api-typings'],
      },
      include: ['mini/*.cjs'],
    },
  };
  const paths: Record<string, string> = {};
  for (const [name, config] of Object.entries(projects)) {
    paths[name] = join(dir, `tsconfig.${name}.json`);
    writeFileSync(paths[name], JSON.stringify(config, null, 2));
  }
  return paths;
}

describe('type-checks every block and example', () => {
  const projects = writeProjects();
  const compilers = { 'TypeScript 5.9': 'node_modules/typescript-5.9/bin/tsc', 'TypeScript 7': 'node_modules/typescript/bin/tsc' };
  for (const [version, tsc] of Object.entries(compilers)) {
    for (const [name, config] of Object.entries(projects)) {
      test(`${version}: the ${name} project`, async () => {
        const result = await promisify(execFile)(process.execPath, [tsc, '-p', config, '--pretty', 'false']).catch((error: { stdout: string }) => error);
        expect(result.stdout).toBe('');
      }, 60_000);
    }
  }
});
