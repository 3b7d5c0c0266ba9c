/**
 * `channel-sandbox check --help` names every check `check token-route` runs, as
 * docs/guide/sandbox.md's table lists them (issue #46: `--help` matches the docs). Before, it left
 * out three of them, `rejected` (what item 1 of the issue is about), `cross-site` and `cache`, and
 * `doctor --help` said doctor adds the shape and `rejected` checks to check token-route's, which
 * check token-route runs too.
 */
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { commandHelp } from '../../../src/testing/cli/cli-help.js';

/** The `token-route` check table of sandbox.md: its ids, in order. */
const guide = readFileSync('docs/guide/sandbox.md', 'utf8');
const table = guide.slice(guide.indexOf('| `token-route` check |'), guide.indexOf('| `webhook` check |'));
const ids = [...table.matchAll(/^\| `([\w-]+)`(?:, `([\w-]+)`)? \|/gm)].flatMap((m) => m.slice(1).filter(Boolean));

/** What the help must say for each check (a new row of the table needs its phrase here). */
const phrases: Record<string, RegExp> = {
  token: /a JWT this sandbox issued/,
  shape: /\{ access_token \}/,
  cache: /plain calls share a cached token/,
  'force-query': /\?force=1/,
  'force-post': /POST \{"forceRefresh":true\}/,
  rejected: /names as rejected/,
  'no-store': /Cache-Control: no-store/,
  credentials: /no token without the credentials/,
  cors: /no CORS for other origins/,
  'cross-site': /another site/,
  timing: /the time per call/,
};

test("the guide's token-route checks are the ones this test knows", () => {
  expect(ids).toEqual(Object.keys(phrases));
});

test.each(Object.entries(phrases))('check --help names the token-route check `%s`', (_, phrase) => {
  const tokenRoute = commandHelp.check!.slice(0, commandHelp.check!.indexOf('channel-sandbox check webhook'));
  expect(tokenRoute.replace(/\s+/g, ' ')).toMatch(phrase); // lines joined
});

test('doctor --help claims no token-route check beyond check token-route', () => {
  expect(commandHelp.doctor).not.toMatch(/what check token-route checks,\s*plus/);
});
