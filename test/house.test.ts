/**
 * The house rules of issue #31, checked on the tree (fast tier): no two `src` files share a
 * name (besides `index.ts` and `types.ts`), no source file over 300 lines, and CONTRIBUTING's
 * module-to-test table names every room of `src/` with the folder its tests live in, each of
 * which exists.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { expect, test } from 'vitest';

const sources = (readdirSync('src', { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => join('src', f));

test('no two src files share a name (besides index.ts and types.ts): a name says what the file does', () => {
  const byName = new Map<string, string[]>();
  for (const file of sources) byName.set(basename(file), [...(byName.get(basename(file)) ?? []), file]);
  const shared = [...byName].filter(([name, files]) => files.length > 1 && name !== 'index.ts' && name !== 'types.ts').map(([, files]) => files.join(' and '));
  expect(shared).toEqual([]);
});

test('no src file is over 300 lines: split it by responsibility', () => {
  const long = sources.map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n').length - 1 })).filter((f) => f.lines > 300);
  expect(long).toEqual([]);
});

/** The rows of CONTRIBUTING's module-to-test table: `| `src/room/` | `test/room/` | … |`. */
function table(): Array<{ source: string; tests: string[] }> {
  const text = readFileSync('CONTRIBUTING.md', 'utf8');
  const start = text.indexOf('| source | tests |');
  expect(start, 'CONTRIBUTING.md has the module-to-test table ("| source | tests |")').toBeGreaterThan(-1);
  const rows = text.slice(start).split('\n').slice(2);
  const end = rows.findIndex((line) => !line.startsWith('|'));
  return rows.slice(0, end).map((line) => {
    const [source, tests] = line.split('|').slice(1, 3);
    const paths = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1].replace(/\/$/, ''));
    return { source: paths(source)[0], tests: paths(tests) };
  });
}

test("CONTRIBUTING's module-to-test table names every room of src/ and only folders that exist", () => {
  const rows = table();
  const rooms = [...new Set(sources.map((file) => dirname(file)))].toSorted();
  expect(rows.map((r) => r.source).toSorted()).toEqual(rooms);
  const missing = rows.flatMap((r) => r.tests).filter((path) => !existsSync(path) || !statSync(path).isDirectory());
  expect(missing).toEqual([]);
});
