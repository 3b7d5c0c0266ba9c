/**
 * Every command block of the README and the guides is run as written by `npm run test:examples`
 * (issue #46): each `sh` block carries a `<!-- try -->` marker, which test/readme/fresh-projects.mjs
 * and test/readme/quick-starts.mjs run (`try: reference` after the README's walkthrough, in its
 * folder; `try: clone` in a clone of this repository). A block without one would be a command
 * nobody runs; one with a placeholder (`[--tamper]`, `session=…`, an id to fill in) could not run.
 * A block in another language (a transcript with `$` prompts, output) is not a command block.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { readmeBlocks } from '../../scripts/readme.mjs';

const documents = ['README.md', ...readdirSync('docs/guide').map((name) => 'docs/guide/' + name)];
const blocks = documents.flatMap((document) =>
  (readmeBlocks(readFileSync(document, 'utf8')) as Array<{ marker?: string; argument?: string; lang: string; code: string; line: number }>)
    .filter((block) => /^(sh|bash|shell|zsh)$/.test(block.lang))
    .map((block) => ({ ...block, where: `${document}:${block.line}` })),
);

test('every sh block of the README and docs/guide is a try block, which test:examples runs', () => {
  expect(blocks.length).toBeGreaterThan(15);
  expect(blocks.filter((block) => block.marker !== 'try').map((block) => block.where)).toEqual([]);
});

test('no command in them is a placeholder to fill in', () => {
  const placeholders = blocks.flatMap((block) =>
    block.code
      .split('\n')
      .map((line) => line.replace(/\s#.*$/, ''))
      .filter((line) => /\[--|…|\s<[a-z][\w-]*>(\s|$)|\.\.\./.test(line))
      .map((line) => `${block.where}: ${line}`),
  );
  expect(placeholders).toEqual([]);
});
