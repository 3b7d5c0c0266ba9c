/**
 * Runs the built package (dist/) by its name, as users get it: a broken `exports` map,
 * a missing file or a CJS/ESM mismatch fails here. Needs `npm run build` first (npm test does it).
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import vm from 'node:vm';
import { parse } from 'acorn';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startFakeService, type FakeService } from '../helpers/fake-service.js';
import { builtEntries, entries, exportsOf, programOf } from '../helpers/exports.js';

const run = promisify(execFile);

/** Loads a built CJS file and its relative chunks inside a fresh vm context (another realm). */
function loadInNewRealm(entry: string): unknown {
  // TextEncoder: ky, bundled into the entry, makes one when the module loads, as browsers allow.
  const context = vm.createContext({ setTimeout, clearTimeout, TextEncoder });
  const cache = new Map<string, { exports: unknown }>();
  const load = (file: string): unknown => {
    const hit = cache.get(file);
    if (hit) return hit.exports;
    const module = { exports: {} };
    cache.set(file, module);
    const wrapper = vm.runInContext(`(function (exports, require, module) {${readFileSync(file, 'utf8')}\n})`, context);
    wrapper(module.exports, (id: string) => (id.startsWith('.') ? load(resolve(dirname(file), id)) : require(id)), module);
    return module.exports;
  };
  return load(entry);
}
const require = createRequire(import.meta.url);

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
/** The subpaths, each with a folder whose package.json serves resolvers that ignore `exports` (webpack 4, TypeScript node10); the build writes them (scripts/subpath-folders.mjs). */
const SUBPATHS = ['server', 'testing', 'miniprogram', 'telemetry'];
const stub = (subpath: string) => JSON.parse(readFileSync(`${subpath}/package.json`, 'utf8')) as Record<string, string>;

/** Every file reachable from package.json's entry points (and the subpath folders'): relative imports, requires, source maps. */
function reachableFromEntries(): Set<string> {
  const pending: string[] = [pkg.main, pkg.module, pkg.types, ...Object.values(pkg.bin as Record<string, string>), 'dist/THIRD_PARTY_NOTICES.md'];
  for (const subpath of SUBPATHS) pending.push(...Object.values(stub(subpath)).map((file) => resolve(subpath, file)));
  const walk = (value: unknown): void => {
    if (typeof value === 'string') pending.push(value);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(pkg.exports);
  const seen = new Set<string>();
  while (pending.length > 0) {
    const file = resolve(pending.pop() as string);
    if (seen.has(file) || !file.startsWith(resolve('dist'))) continue;
    seen.add(file);
    if (file.endsWith('.map')) continue;
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      // A declaration file's './x.js' / './x.cjs' means './x.d.ts' / './x.d.cts'.
      const target = /\.d\.c?ts$/.test(file) ? match[1].replace(/\.(c?)js$/, '.d.$1ts') : match[1];
      pending.push(resolve(dirname(file), target));
    }
    const map = /sourceMappingURL=(\S+)/.exec(text);
    if (map) pending.push(resolve(dirname(file), map[1]));
  }
  return seen;
}

describe('built package', () => {
  test('dist/ holds only files an entry point reaches (no stale chunks from earlier builds)', () => {
    const files = (readdirSync('dist', { recursive: true, withFileTypes: true }) as Array<{ isFile(): boolean; parentPath: string; name: string }>)
      .filter((entry) => entry.isFile())
      .map((entry) => resolve(entry.parentPath, entry.name));
    const reachable = reachableFromEntries();
    expect(files.filter((file) => !reachable.has(file))).toEqual([]);
    expect([...reachable].filter((file) => !files.includes(file))).toEqual([]);
  });

  test('every function, constant and class the published .d.ts files export carries JSDoc (editor hovers)', () => {
    const undocumented: string[] = [];
    for (const file of reachableFromEntries()) {
      if (!file.endsWith('.d.ts')) continue;
      const text = readFileSync(file, 'utf8');
      // What the file exports (`export { local as alias }`); the declarations inlined from bundled
      // libraries (ky's, zod's) that only support those types are not exported and not checked.
      const exported = new Set(
        [...text.matchAll(/^export (?:type )?\{([^}]*)\}/gm)].flatMap((m) => m[1].split(',').map((part) => part.trim().split(/\s+/)[0])),
      );
      const lines = text.split('\n');
      lines.forEach((line, i) => {
        const [, exportKeyword, name] = /^(export )?declare (?:const|function|class) (\w+)/.exec(line) ?? [];
        if (!name || !(exportKeyword || exported.has(name))) return;
        let previous = i - 1;
        while (previous >= 0 && lines[previous].trim() === '') previous--;
        if (!lines[previous]?.trim().endsWith('*/')) undocumented.push(name);
      });
    }
    expect(undocumented).toEqual([]);
  });

  let service: FakeService;
  beforeAll(async () => {
    service = await startFakeService();
  });
  afterAll(() => service.close());

  const flow = (load: string) => `
    ${load}
    const client = createClient({ baseUrl: process.env.SERVICE, tokenProvider: () => process.env.TOKEN });
    client.get('/hello').then(
      (data) => console.log(JSON.stringify({ ok: data.path, isError: isChannelError(new ConfigError('x')) })),
      (error) => console.log(JSON.stringify({ failed: error.code, message: error.message })),
    );`;

  for (const [kind, load] of [
    ['ESM import', "import { createClient, isChannelError, ConfigError } from 'channel-sdk';"],
    ['CJS require', "const { createClient, isChannelError, ConfigError } = require('channel-sdk');"],
  ]) {
    // CommonJS without require(esm) (Node 20.3-20.18, or turned off): real CommonJS all the way down.
    test(`${kind} of "channel-sdk" runs a request end to end${kind.startsWith('CJS') ? ' (without require(esm))' : ''}`, async () => {
      const token = service.issue();
      const flags = kind.startsWith('ESM') ? ['--input-type=module'] : ['--input-type=commonjs', '--no-experimental-require-module'];
      const { stdout } = await run(process.execPath, [...flags, '-e', flow(load)], {
        env: { ...process.env, SERVICE: service.url, TOKEN: token },
      });
      expect(JSON.parse(stdout)).toEqual({ ok: '/hello', isError: true });
    });
  }

  test('a process exits as soon as its client.fetch calls are done: the timer of the attempts’ timeouts does not hold it open', async () => {
    // One timer per client serves every attempt's timeout (fetch-native.ts); it is unref'd, so a
    // 10-minute timeout left armed after the last response keeps nobody waiting. A ref'd timer
    // would hold this process for 10 minutes and the run below would time out.
    const code = `import { createClient } from 'channel-sdk';
      const client = createClient({ baseUrl: process.env.SERVICE, tokenProvider: () => process.env.TOKEN, timeout: 600000 });
      const responses = await Promise.all([client.fetch('/hello'), client.fetch('/hello?again=1')]);
      console.log(JSON.stringify(await Promise.all(responses.map((r) => r.json().then((b) => b.data.path)))));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], {
      env: { ...process.env, SERVICE: service.url, TOKEN: service.issue() },
      timeout: 15_000,
    });
    expect(JSON.parse(stdout)).toEqual(['/hello', '/hello?again=1']);
  });

  for (const [kind, flag, load] of [
    ['ESM import', '--input-type=module', "import * as server from 'channel-sdk/server'; const where = import.meta.resolve('channel-sdk/server');"],
    // -e code is CommonJS unless told otherwise; no require(esm) either.
    ['CJS require', '--no-experimental-require-module', "const server = require('channel-sdk/server'); const where = require.resolve('channel-sdk/server');"],
  ]) {
    test(`${kind} of "channel-sdk/server" resolves to the node:crypto build and verifies the GitHub vector`, async () => {
      const code = `${load}
        server.verifyWebhookSignature('Hello, World!', '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17', "It's a Secret to Everybody")
          .then((ok) => console.log(JSON.stringify({ ok, where: where.slice(where.lastIndexOf('/dist/') + 6), exchange: typeof server.createTokenExchange })));`;
      const { stdout } = await run(process.execPath, [flag, '-e', code]);
      expect(JSON.parse(stdout)).toEqual({ ok: true, where: kind.startsWith('ESM') ? 'server-node.js' : 'server-node.cjs', exchange: 'function' });
    });
  }

  test('the built .d.ts of each entry exports the names its source does (test/entries.test.ts pins those)', () => {
    const program = programOf([...Object.values(entries), ...Object.values(builtEntries)]);
    const names = (files: Record<string, string>) => Object.fromEntries(Object.entries(files).map(([entry, file]) => [entry, exportsOf(program, file)]));
    expect(names(builtEntries)).toEqual(names(entries));
  });

  test('isChannelError recognises an error made in another realm; instanceof does not', () => {
    const foreign = loadInNewRealm(require.resolve('channel-sdk')) as Record<string, new (m: string) => Error>;
    const error = new foreign.UnauthorizedError('from another realm');
    const host = require('channel-sdk') as typeof import('../../src/index.js');
    expect(error instanceof host.ChannelError).toBe(false);
    expect(host.isChannelError(error)).toBe(true);
    expect(host.isChannelError(new Error('plain'))).toBe(false);
    expect(host.isChannelError({ code: 'UNAUTHORIZED' })).toBe(false);
  });

  test('the edge build of channel-sdk/server imports nothing from node:*', () => {
    const files = [resolve('dist/server.js'), resolve('dist/server.cjs')];
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const code = readFileSync(file, 'utf8');
      expect(code).not.toMatch(/from ['"]node:|require\(['"]node:/);
      for (const [, rel] of code.matchAll(/(?:from |require\()['"](\.\/[^'"]+)['"]/g)) visit(resolve(dirname(file), rel));
    };
    files.forEach(visit);
    expect(seen.size).toBeGreaterThan(2);
  });

  test('package.json names the entries it ships', () => {
    expect(pkg.sideEffects).toBe(false);
    expect(Object.keys(pkg.exports['.'].import)[0]).toBe('types');
    expect(Object.keys(pkg.exports['.'].require)[0]).toBe('types');
  });

  test('publishes no runtime dependencies: ky, mitt and zod are bundled, and only node:* is imported', () => {
    expect([pkg.dependencies, pkg.peerDependencies, pkg.optionalDependencies, pkg.bundleDependencies]).toEqual([undefined, undefined, undefined, undefined]);
    for (const name of ['ky', 'mitt', 'zod']) expect(pkg.devDependencies).toHaveProperty(name);
    const bare = new Set<string>();
    for (const file of reachableFromEntries()) {
      if (!/\.c?js$/.test(file)) continue;
      const code = readFileSync(file, 'utf8');
      for (const match of code.matchAll(/^(?:import|export)\b[^'"\n]*?['"]([^'"]+)['"];?$|\b(?:require|import)\(['"]([^'"]+)['"]\)/gm))
        bare.add(match[1] ?? match[2]);
    }
    expect([...bare].filter((id) => !id.startsWith('.') && !id.startsWith('node:'))).toEqual([]);
    expect(bare).toContain('node:crypto');
  });

  test('dist/THIRD_PARTY_NOTICES.md carries the licence of every bundled package, at the installed version', () => {
    const notices = readFileSync('dist/THIRD_PARTY_NOTICES.md', 'utf8');
    const listed = [...notices.matchAll(/^## (\S+) (\S+) \((\S+)\)$/gm)].map(([, name, version, licence]) => [name, version, licence]);
    const installed = (name: string) => JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')).version;
    expect(listed).toEqual(['ky', 'mitt', 'zod'].map((name) => [name, installed(name), 'MIT']));
    expect(notices.match(/Permission is hereby granted/g)).toHaveLength(3);
  });

  test.each(SUBPATHS)(
    'channel-sdk/%s has a folder for resolvers without `exports` (webpack 4, TypeScript node10), pointing where `exports` does',
    (subpath) => {
      const target = pkg.exports['./' + subpath];
      // The universal build for the `main` field: `node` is a condition only `exports` knows.
      const universal = { import: target.import, require: target.require };
      expect(stub(subpath)).toEqual({
        main: '.' + universal.require.default,
        module: '.' + universal.import.default,
        types: '.' + universal.require.types,
      });
      expect(pkg.files).toContain(subpath);
      // Generated, so never edited by hand or committed.
      expect(readFileSync('.gitignore', 'utf8').split('\n')).toContain(`/${subpath}/`);
    },
  );

  test("each built file parses at its entry's syntax level: ES2017 for the mini-program entries, ES2022 for the others", () => {
    const levels: Record<string, number> = {};
    const failures: string[] = [];
    for (const file of reachableFromEntries()) {
      if (!/\.c?js$/.test(file)) continue;
      const level = /[/\\](miniprogram\.c?js|mp-[^/\\]+)$/.test(file) ? 2017 : 2022;
      try {
        parse(readFileSync(file, 'utf8'), { ecmaVersion: level, sourceType: file.endsWith('.js') ? 'module' : 'script', allowHashBang: true });
      } catch (error) {
        failures.push(`${file}: ${(error as Error).message} at ES${level}`);
      }
      levels[level] = (levels[level] ?? 0) + 1;
    }
    expect(failures).toEqual([]);
    expect(levels[2017]).toBeGreaterThanOrEqual(2);
  });

  // 2.5 MiB until #45 (the app's life and the network) added ~0.13 MB of ESM + CJS + maps + types
  // (2.52 -> 2.65 MB unpacked); 2.7 MiB until the audit rounds of #42-#47 took it to 2.84 MB; 2.75 MiB
  // until the eighth round (doctor's secret forms, the inbox at Redis's output limits, crossTab's logout) took it to 2.87 MB.
  test('installs in under 2.8 MiB (no dependencies, so the tarball is the whole install)', async () => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { env: { ...process.env, npm_config_loglevel: 'silent' } });
    const [{ unpackedSize }] = JSON.parse(stdout.slice(stdout.indexOf('[')));
    expect(unpackedSize).toBeLessThan(2.8 * 1024 * 1024);
  });

  test('the mini-program sample installs the packed tarball (as from the registry), not a folder link', () => {
    const sample = JSON.parse(readFileSync('demo/miniprogram/package.json', 'utf8'));
    expect(sample.dependencies['channel-sdk']).toBe(`file:../../channel-sdk-${pkg.version}.tgz`);
  });
});
