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

/** Each comment line of a source (`//`, `/*`, ` *`), with its file and line. */
const commentLines = sources.flatMap((file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .map((text, i) => ({ where: `${file}:${i + 1}`, text }))
    .filter(({ text }) => /^\s*(\/\/|\/\*|\*)/.test(text)),
);

test('no src folder holds more than 20 source files directly: a room its name explains (issue #44 item 2)', () => {
  const counts = new Map<string, number>();
  for (const file of sources) counts.set(dirname(file), (counts.get(dirname(file)) ?? 0) + 1);
  expect([...counts].filter(([, n]) => n > 20).map(([dir, n]) => `${dir}: ${n} files`)).toEqual([]);
});

test('no src comment cites a document the repository does not have (issue #44 item 6)', () => {
  const cited = commentLines.flatMap(({ where, text }) => [...text.matchAll(/[\w./-]+\.md\b/g)].map(([path]) => ({ where, path })));
  expect(cited.length).toBeGreaterThan(5);
  expect(cited.filter(({ path }) => !existsSync(path)).map(({ where, path }) => `${where}: ${path}`)).toEqual([]);
});

/**
 * A source file a comment names, as it is written: from the repository's root, from the citing
 * file's folder, or as the tail of a path under src/ (`core/requests/attempts.ts`, `host-globals.ts`).
 * A file moved or renamed leaves such a comment pointing nowhere (issue #44 item 6).
 */
const citesMissingSource = (file: string, text: string) =>
  [...text.matchAll(/(?<![\w@./-])((?:[\w-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:ts|mjs|cjs))(?!\w)/g)]
    .map(([, path]) => path)
    // dist/ and miniprogram_dist/ are what the build writes: a clean clone runs this before it.
    .filter(
      (path) =>
        !path.endsWith('.d.ts') &&
        !/^(miniprogram_)?dist\//.test(path) &&
        !existsSync(path) &&
        !existsSync(join(dirname(file), path)) &&
        !sources.some((s) => s.endsWith('/' + path)),
    );

test('no src comment names a source file that is not there: moved or renamed since (issue #44 item 6)', () => {
  // What it catches: a room's old name, a file since renamed; what it lets through: the three ways of naming one.
  expect(citesMissingSource('src/server/probe.ts', '// as core/telemetry-client.ts does; a name from hosts.ts')).toEqual([
    'core/telemetry-client.ts',
    'hosts.ts',
  ]);
  expect(
    citesMissingSource(
      'src/server/probe.ts',
      '// core/requests/attempts.ts, host-globals.ts, ./api.ts, scripts/size.mjs, dist/check.cjs, miniprogram-api-typings types/wx/lib.wx.api.d.ts',
    ),
  ).toEqual([]);
  expect(commentLines.flatMap(({ where, text }) => citesMissingSource(where.split(':')[0], text).map((path) => `${where}: ${path}`))).toEqual([]);
});

/**
 * A measured figure in a comment (a time per call, a size in gzip bytes, the memory a run
 * pinned) stops being true the day the code or the machine changes, and no test notices
 * (issue #44 item 6): it belongs in docs/maintainers/ beside the bench that measures it.
 */
const MEASURED = /~\s*\d|\d\s*(ns|µs)\b|\d\s*K?B gz\b|\d(\.\d+)?\s*Gi?B\b|\d(\.\d+)?\s*×/;

test('no src comment quotes a measured figure (issue #44 item 6)', () => {
  expect(
    ['// Date.now() costs ~75 ns here', '// cost 36 B gz of the bundles', '// grew to 1.5 GiB', '// 1.12× bare fetch'].filter((t) => MEASURED.test(t)),
  ).toHaveLength(4);
  expect(
    ['// the next 2 data calls', '// at most 10 minutes, ±20% jitter', '// up to 1 MiB', '// 8000 ms, the service window'].filter((t) => MEASURED.test(t)),
  ).toEqual([]);
  expect(commentLines.filter(({ text }) => MEASURED.test(text)).map(({ where, text }) => `${where}: ${text.trim()}`)).toEqual([]);
});

/** The host names a source or test spells out in one array literal (four or more: a copy of the list, not a sample). */
const HOST = /['"`](wx|my|tt|swan|qq|uni|Taro)['"`]/g;
const hostListsIn = (text: string) =>
  [...text.matchAll(/\[[^[\]]*\]/g)].map(([list]) => new Set([...list.matchAll(HOST)].map(([, name]) => name)).size).filter((n) => n >= 4);

test('the host list is written once, in host-globals.ts: src and the tests read HOST_NAMES (issue #44 item 5)', () => {
  expect(
    hostListsIn("const kinds = ['wx', 'my', 'tt', 'swan', 'qq', 'uni', 'Taro'];\nfor (const k of ['wx', 'my', 'tt', 'uni', 'Taro']) delete g[k];"),
  ).toEqual([7, 5]);
  expect(hostListsIn("const kinds: HostKind[] = ['wx', 'my', 'tt']; const all = [...HOST_NAMES];")).toEqual([]);
  const files = [...sources, ...(readdirSync('test', { recursive: true }) as string[]).filter((f) => /\.[cm]?[jt]s$/.test(f)).map((f) => join('test', f))];
  // Besides the list itself and this file's probes: test/consumers/, which runs the packed package and cannot import src/.
  const own = (file: string) =>
    file === 'src/transports/miniprogram/host-globals.ts' || file === 'test/house.test.ts' || /^test\/consumers\/|node_modules/.test(file);
  const copies = files.filter((file) => !own(file) && hostListsIn(readFileSync(file, 'utf8')).length > 0);
  expect(copies).toEqual([]);
});

// Each room's layer (issue #44 item 2: "keep the no-cycle and no-upward rules"). An import goes to
// its own room or to a room of a lower layer, at any depth: the lint's path patterns
// (`.oxlintrc.json`) match one folder level, and the rooms of `core/` sit one level down.
// A new room is given its layer here; the entries are the top, but for the server entries,
// which the CLI (testing/) loads.
const LAYERS: Record<string, number> = { errors: 0, shared: 1, schemas: 1, core: 2, server: 2, transports: 3, telemetry: 3, tokens: 4, testing: 5 };
const ENTRY_LAYERS: Record<string, number> = { 'server.ts': 3, 'server-node.ts': 3 };
const roomOf = (file: string) => (file.split('/').length === 2 ? 'entries' : file.split('/')[1]);
const layerOf = (file: string) => (roomOf(file) === 'entries' ? (ENTRY_LAYERS[basename(file)] ?? 9) : LAYERS[roomOf(file)]);

/** Every relative import of the sources (static, type-only and dynamic), as [importer, imported file]. */
function importsOf(files: string[], read: (file: string) => string): Array<[string, string]> {
  return files.flatMap((file) =>
    [...read(file).matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.\.?\/[^'"]+)['"]/g)].map(
      ([, path]) => [file, join(dirname(file), path).replace(/\.js$/, '.ts')] as [string, string],
    ),
  );
}

const upward = (edges: Array<[string, string]>) =>
  edges.filter(([from, to]) => roomOf(from) !== roomOf(to) && !(layerOf(to) < layerOf(from))).map(([from, to]) => `${from} -> ${to}`);

test('nothing in src imports upward or sideways, at any depth: each room a layer (issue #44 item 2)', () => {
  expect(sources.map(roomOf).filter((room) => room !== 'entries' && LAYERS[room] === undefined)).toEqual([]);
  expect(upward(importsOf(sources, (file) => readFileSync(file, 'utf8')))).toEqual([]);
  // What it catches: the floor reaching into a room of core/ or the plug-in, core into a host's transport.
  const probes: Record<string, string> = {
    'src/shared/probe.ts': "import { x } from '../core/requests/attempts.js';\nimport type { y } from '../telemetry/client-telemetry.js';",
    'src/core/requests/probe.ts': "const z = await import('../../transports/miniprogram/host-functions.js');",
    'src/server/tokens/probe.ts': "export { w } from '../../core/client.js';",
  };
  expect(upward(importsOf(Object.keys(probes), (file) => probes[file]))).toEqual([
    'src/shared/probe.ts -> src/core/requests/attempts.ts',
    'src/shared/probe.ts -> src/telemetry/client-telemetry.ts',
    'src/core/requests/probe.ts -> src/transports/miniprogram/host-functions.ts',
    'src/server/tokens/probe.ts -> src/core/client.ts',
  ]);
});

test("CONTRIBUTING's map of src/core names every file of the front and of its three rooms (audit 8: five had gone unnamed)", () => {
  const text = readFileSync('CONTRIBUTING.md', 'utf8');
  const start = text.indexOf('**src/core, in three rooms');
  expect(start, 'CONTRIBUTING.md has the paragraph "src/core, in three rooms"').toBeGreaterThan(-1);
  const map = text.slice(start, text.indexOf('The rooms import', start));
  const named = new Set([...map.matchAll(/`([\w.-]+\.ts)`/g)].map(([, name]) => name));
  const core = sources.filter((file) => /^src\/core\/([\w-]+\/)?[\w.-]+\.ts$/.test(file));
  expect(core.length).toBeGreaterThan(30);
  expect(core.filter((file) => !named.has(basename(file)))).toEqual([]);
});
