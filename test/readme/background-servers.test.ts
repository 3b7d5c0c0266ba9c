/**
 * A try block pasted into sh does not wait for the servers it starts with `&`: the next line runs
 * at once. The emulated shell of `npm run test:examples` (test/readme/reader-shell.mjs) waits for
 * each server to be ready, so it passed webhooks.md's inbox block, whose
 * `npx channel-sandbox push --to …` came right after `npx channel-sandbox start … &`, the receiver
 * and the worker: pasted into sh, the push answered "no sandbox at http://127.0.0.1:8787
 * (connection refused)" and exited 1 (issue #46: every block runs as written). A block now ends
 * with its servers, and what uses them is the next block; the emulated shell refuses a block that
 * does not, and this test checks every block of the README and the guides.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { freePort } from '../helpers/redis-server.mjs';
// @ts-expect-error: an .mjs helper of the examples stage, without types
import { documentBlocks, raceAfterBackground } from './reader-shell.mjs';

const documents = ['README.md', ...readdirSync('docs/guide').map((name) => 'docs/guide/' + name)];
const { tries } = documentBlocks('.', documents, (file: string) => readFileSync(file, 'utf8')) as {
  tries: Array<{ document: string; line: number; code: string }>;
};

test('sh runs the line after a server started with & before that server listens (what the rule stands on)', async () => {
  const port = await freePort();
  // A server that takes a moment to start, as `npx channel-sandbox start` does, then a client line.
  const server = `setTimeout(() => require('node:net').createServer((s) => s.end('up')).listen(${port}, '127.0.0.1'), 500); setTimeout(() => process.exit(), 1500)`;
  const client = `require('node:net').connect(${port}, '127.0.0.1').on('data', (d) => console.log(String(d))).on('error', (e) => console.log(e.code))`;
  const block = `node -e "${server}" &\nnode -e "${client}"\nwait`;
  expect(raceAfterBackground(block)).toMatchObject({ line: expect.stringContaining('node -e') });
  expect(execFileSync('/bin/sh', ['-c', block], { encoding: 'utf8' }).trim()).toBe('ECONNREFUSED');
});

test.each(tries.map((block) => [`${block.document}:${block.line}`, block] as const))(
  '%s: no line runs after a server the block starts in the background (sh does not wait for it)',
  (_, block) => {
    expect(raceAfterBackground(block.code)).toBeUndefined();
  },
);
