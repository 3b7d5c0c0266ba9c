/**
 * No document cites a file the repository lacks (issue #46 item 5: docs/guide/testing.md cited a
 * notes file that lives outside the repository). Every path a Markdown file names, in prose or in
 * its code, must be one a reader can open: a file or folder of the repository (from its root, from
 * the document's folder, or under src/ as docs/maintainers name modules), or a file of the reader's
 * own project that the documents show (an example's path in that project: `src/channel.js` is the
 * tail of examples/quick-starts/uniapp/src/channel.js; an example's first comment names where it
 * goes; `echo … > file` writes one), or what a build writes (dist/, node_modules/, miniprogram_npm/).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { expect, test } from 'vitest';
import { readerFiles } from './reader-files.js';

const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8' }).split('\n').filter(Boolean);
const topLevel = new Set(tracked.map((file) => file.split('/')[0]));
const documents = readerFiles().filter((file) => file.endsWith('.md'));
/** A path with an extension, or one that starts at a top-level folder of the repository (or shared/, which it lacks). */
const PATH = /(?<![\w./@:-])((?:\.{1,2}\/)*(?:[\w@.-]+\/)+[\w@.-]+)/g;
const FILE = /\.(md|ts|tsx|js|jsx|mjs|cjs|json|vue|sh|yml|yaml)$/;
/** Placeholders that say "a file", not which one. */
const PLACEHOLDER = /^(?:examples\/[abx]\.tsx?|src\/[ax]\.tsx?|\/src\/a\.ts|path\/to\/|copy\/of\/)/;
const BUILT = /^(?:dist|node_modules|miniprogram_npm|miniprogram_dist|public|\.readme-check)\//;

/** Where the reader's files go: every example's path below its stack, the path its first comment names, the files `echo` writes. */
function readerPaths(): Set<string> {
  const paths = new Set<string>();
  for (const file of tracked.filter((f) => f.startsWith('examples/'))) {
    const parts = file.split('/');
    for (let i = 1; i < parts.length; i++) paths.add(parts.slice(i).join('/'));
    const named = /^(?:\/\/|<!--)\s*([\w./-]+\.\w+)[:\s]/.exec(readFileSync(file, 'utf8'))?.[1];
    if (named) paths.add(named);
  }
  for (const document of documents) {
    const text = readFileSync(document, 'utf8');
    for (const [, target] of text.matchAll(/^echo .* > ([\w./-]+)$/gm)) paths.add(target);
    for (const [marker] of text.matchAll(/<!-- try:[^>]*-->/g)) for (const [, target] of marker.matchAll(/=([\w./-]+)/g)) paths.add(target);
  }
  return paths;
}

/** Each path `text` cites that resolves nowhere. */
export function missingCitations(document: string, text: string, reader = readerPaths()): string[] {
  const missing = new Set<string>();
  for (const [, cited] of text.matchAll(PATH)) {
    const path = cited.replace(/[.]+$/, '');
    const first = path.replace(/^(?:\.{1,2}\/)+/, '').split('/')[0];
    if (!FILE.test(path) && !topLevel.has(first) && first !== 'shared') continue;
    if (/^https?$/.test(first) || PLACEHOLDER.test(path) || BUILT.test(path.replace(/^\.\//, ''))) continue;
    const bare = path.replace(/^(?:\.{1,2}\/)+/, '');
    // TypeScript's ESM imports name the .ts file as .js.
    const found =
      (path.endsWith('.js') && [bare.replace(/\.js$/, '.ts'), bare.replace(/\.js$/, '.tsx')].some((ts) => reader.has(ts))) ||
      existsSync(path) ||
      existsSync(normalize(join(dirname(document), path))) ||
      existsSync(join('src', path)) ||
      reader.has(bare) ||
      tracked.some((file) => file.endsWith('/' + bare));
    if (!found) missing.add(path);
  }
  return [...missing];
}

test('the check sees a citation of a file the repository lacks, and passes those it has', () => {
  expect(missingCitations('docs/guide/testing.md', 'Callbacks as the hosts give them (shared/notes/miniprogram-hosts.md), see test/helpers/hosts.ts')).toEqual([
    'shared/notes/miniprogram-hosts.md',
  ]);
  expect(missingCitations('docs/guide/testing.md', 'the projects `test/consumers/uniapp` and `test/consumers/nothing-here`')).toEqual([
    'test/consumers/nothing-here',
  ]);
  expect(missingCitations('docs/guide/testing.md', '[quick starts](quick-starts.md), `src/channel.js`, `pages/orders/orders.js`, `dist/index.js`')).toEqual([]);
});

test('no document cites a file the repository lacks', () => {
  const reader = readerPaths();
  const problems = documents.flatMap((document) => missingCitations(document, readFileSync(document, 'utf8'), reader).map((path) => `${document}: ${path}`));
  expect(problems).toEqual([]);
});
