// The README, CONTRIBUTING and scripts/test.mjs give one figure for `npm test` (#44 item 4): a
// figure changed in one place and not the others fails here.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';

const figure = (file: string, line: RegExp) => {
  const found = readFileSync(file, 'utf8').match(line);
  expect(found, `${file} states how long npm test takes (${line})`).not.toBeNull();
  return (found as RegExpMatchArray)[1];
};

test('one figure for how long npm test takes', () => {
  const figures = {
    'README.md': figure('README.md', /^npm test .*the fast tier \(about (\d+ s)\)/m),
    'CONTRIBUTING.md': figure('CONTRIBUTING.md', /^npm test .*the fast tier, after every edit: about (\d+ s)/m),
    'scripts/test.mjs': figure('scripts/test.mjs', /the fast tier a contributor runs after every edit \(about (\d+ s)/),
  };
  expect(new Set(Object.values(figures)).size, JSON.stringify(figures)).toBe(1);
});
