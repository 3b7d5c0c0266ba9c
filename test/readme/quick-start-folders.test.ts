/**
 * A quick start's files go in its folder first ("the files above in my-vite-app"), then its
 * block runs. The block's first line makes or enters that folder, and in sh that line must keep
 * working with the folder already there: before, `mkdir my-vite-app && cd my-vite-app` failed on
 * it (File exists), the `&& cd` never ran, and `npm init`, the installs and the build landed in
 * the folder above (issue #46: every block runs as written). The emulated shell of
 * `npm run test:examples` (test/readme/reader-shell.mjs) did not see it: its `mkdir` never failed.
 * Here the real /bin/sh runs each such first line, in a folder already holding the block's files.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect, test } from 'vitest';
// @ts-expect-error: an .mjs helper of the examples stage, without types
import { documentBlocks, enteredFolder, namedFiles, parseLine } from './reader-shell.mjs';

const documents = ['README.md', ...readdirSync('docs/guide').map((name) => 'docs/guide/' + name)];
const { tries } = documentBlocks('.', documents, (file: string) => readFileSync(file, 'utf8')) as {
  tries: Array<{ document: string; line: number; argument?: string; code: string }>;
};
/** The try blocks whose files the reader puts in the folder their first line enters. */
const entering = tries
  .map((block) => ({ block, folder: enteredFolder(block.code) as string | undefined, files: namedFiles(block.argument) as Array<{ to: string }> }))
  .filter(({ folder, files }) => folder && files.length);

test('the quick starts have blocks whose files go in the folder they enter', () => {
  expect(entering.map(({ folder }) => folder)).toEqual(
    expect.arrayContaining(['channel-backend', 'my-vite-app', 'my-next-app', 'my-uni-app', 'my-taro-app', 'my-wechat-app']),
  );
});

test.each(entering.map((entry) => [`${entry.block.document}:${entry.block.line} (${entry.folder})`, entry] as const))(
  '%s: its first line, in sh, enters the folder that already holds its files',
  (_, { block, folder, files }) => {
    const first = block.code.split('\n')[0];
    // Only folder commands, so that sh can run the line here on its own.
    const programs = (parseLine(first).words as string[]).filter((_word, i, words) => i === 0 || words[i - 1] === '&&');
    expect(
      programs.every((program) => program === 'mkdir' || program === 'cd'),
      `${first}: only mkdir and cd expected`,
    ).toBe(true);
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'channel-sdk-folders-')));
    try {
      for (const { to } of files) {
        mkdirSync(dirname(join(base, folder!, to)), { recursive: true });
        writeFileSync(join(base, folder!, to), '// the reader saved this file first\n');
      }
      let output: string;
      try {
        output = execFileSync('/bin/sh', ['-c', `${first}\npwd`], { cwd: base, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (error) {
        output = String((error as { stdout?: string }).stdout) + String((error as { stderr?: string }).stderr);
      }
      expect(output.trim().split('\n').at(-1), `sh ran \`${first}\` and then stood in`).toBe(join(base, folder!));
      expect(files.filter(({ to }) => !existsSync(join(base, folder!, to)))).toEqual([]);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  },
);
