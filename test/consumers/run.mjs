// `npm run test:consumers`: the packed package, installed as users install it (a plain
// hoisted `npm install <tgz>` into a fresh project, never a folder link), through the tools
// they run: WeChat's npm build (miniprogram-ci), strict npm / yarn 1 / pnpm installs,
// require() without require(esm), Jest, TypeScript 5.9 and 7 under every resolution mode,
// webpack 4 and 5, Node 20 / 22 / 24. The tools are pinned in test/consumers/package.json
// (own lockfile, installed here). Prints one markdown table; exits 1 if any check failed.
// KEEP_TMP=1 keeps the temporary projects; TARBALL=path checks that tarball instead.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parse } from 'acorn';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const tools = join(here, 'node_modules');
const fixtures = join(here, 'fixtures');
const started = performance.now();
const tmp = mkdtempSync(join(tmpdir(), 'channel-sdk-consumers-'));
const KB = 1024;
// 2 MB until #20, #22, #25 (files, check, client isolation) added ~0.4 MB of ESM + CJS + maps;
// 2.5 MiB until #34 (telemetry on the client, the exchange, the webhook handler and the inbox)
// added ~0.12 MB (2.34 -> 2.46 MB unpacked, about 2,600 KiB on disk); 2,700 KiB until #45 (the
// app's life and the network) added ~0.13 MB (2.52 -> 2.65 MB unpacked, 2,696 -> 2,820 KiB on disk);
// 2,880 KiB until #43 and #47 (the inbox at Redis's limits, channel-sandbox doctor) and the telemetry
// plug-in's own entry (#44) took it to 2.76 MB unpacked, 2,880 KiB on disk; 2,940 KiB until the
// fifth and sixth audit rounds of #42-#47 (Redis keyPrefix, doctor's Cluster discovery and secret
// forms, the queued call's pacing) took it to 2.82 MB unpacked, 2,944 KiB on disk; 3,000 KiB until the
// seventh round (doctor and the inbox on a Redis that refuses INFO or CONFIG, offline: false, the
// Buffer copy in beforeSend) took it to 2.84 MB unpacked, 2,984 KiB on disk; 3,040 KiB until the eighth
// round (doctor's secret forms, the inbox at Redis's output limits, crossTab's logout) took it to 2.87 MB
// unpacked, 3,020 KiB on disk: about 2% above that.
const INSTALL_BUDGET = 3080 * KB;
const ENTRIES = ['channel-sdk', 'channel-sdk/server', 'channel-sdk/testing', 'channel-sdk/miniprogram', 'channel-sdk/telemetry'];

// Children get a user's environment: none of the npm_* variables `npm run` sets for this script.
const userEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));

/** Runs a command; resolves to its stdout, or rejects with the tail of what it printed. */
function run(command, args, { cwd = tmp, env = {}, timeout = 300_000 } = {}) {
  return new Promise((resolvePromise, reject) => {
    execFile(command, args, { cwd, env: { ...userEnv, ...env }, timeout, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (!error) return resolvePromise({ stdout, stderr });
      const output = (stdout + '\n' + stderr).trim().split('\n').slice(-25).join('\n');
      reject(
        new Error(
          `${command.startsWith(root) ? relative(root, command) : command} ${args.join(' ')} (in ${relative(tmp, cwd) || '.'}): ${error.killed ? 'timed out' : 'exit ' + error.code}\n${output}`,
        ),
      );
    });
  });
}
const node = (args, options) => run(process.execPath, args, options);
const lastJson = (stdout) => JSON.parse(stdout.trim().split('\n').at(-1));
const versionOf = (name) => JSON.parse(readFileSync(join(tools, name, 'package.json'), 'utf8')).version;
const kb = (bytes) => `${(bytes / KB).toFixed(0)} KB`;
function expectEqual(actual, expected, what) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

/** A fresh consumer project with the fixtures copied in. */
function project(name) {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer-' + name, version: '1.0.0', private: true, license: 'UNLICENSED' }, null, 2));
  cpSync(fixtures, dir, { recursive: true });
  return dir;
}
function diskUsage(dir) {
  let bytes = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) bytes += Math.ceil(statSync(join(entry.parentPath, entry.name)).size / 4096) * 4096; // as `du` counts 4 KB blocks
  }
  return bytes;
}

const rows = [];
async function check(what, tool, version, body) {
  const t0 = performance.now();
  try {
    const note = await body();
    rows.push({ what, tool, version, ok: true, note: note ?? '', seconds: (performance.now() - t0) / 1000 });
  } catch (error) {
    rows.push({ what, tool, version, ok: false, note: error.message, seconds: (performance.now() - t0) / 1000 });
  }
}

try {
  // The tools, from their own lockfile. Reinstalled only when the lockfile changed (always on CI's clean clone).
  // `npm install --no-save` rather than `npm ci`: the registry lacks some platform builds that
  // jest's resolver lists as optional (@unrs/resolver-binding-android-*), so they cannot be in
  // the lockfile, and `npm ci` refuses a lockfile without them; --no-save installs exactly
  // what the lockfile holds and leaves it untouched. --no-bin-links: two Node versions both
  // name their binary `node`.
  const lock = readFileSync(join(here, 'package-lock.json'));
  const stamp = join(tools, '.channel-sdk-lock-hash');
  const hash = createHash('sha256').update(lock).digest('hex');
  const t0 = performance.now();
  const fresh = !existsSync(stamp) || readFileSync(stamp, 'utf8') !== hash;
  if (fresh) {
    await run('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--no-bin-links'], { cwd: here, timeout: 900_000 });
    writeFileSync(stamp, hash);
  }
  const npmVersion = (await run('npm', ['--version'])).stdout.trim();
  rows.push({
    what: 'the tools of this stage, from test/consumers/package-lock.json',
    tool: 'npm install --no-save',
    version: npmVersion,
    ok: true,
    note: fresh ? 'installed' : 'up to date',
    seconds: (performance.now() - t0) / 1000,
  });
  // This Node (20), 22 and 24, and the oldest Node that package.json's `engines` admits
  // (20.3: AbortSignal.any, which the token exchange uses with a caller's signal).
  const withVersion = async (label, binary) => [label, binary, (await run(binary, ['--version'])).stdout.trim().slice(1)];
  const nodes = [
    await withVersion('Node 20', process.execPath),
    await withVersion('Node 22', join(tools, 'node22/bin/node')),
    await withVersion('Node 24', join(tools, 'node24/bin/node')),
  ];
  const floor = await withVersion('Node 20.3 (engines floor)', join(tools, 'node20-floor/bin/node'));
  const engines = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node;
  expectEqual(engines, '>=' + floor[2].replace(/\.0$/, ''), 'package.json engines.node (the floor the stage runs)');

  // The tarball, as `npm publish` would send it (prepack builds); TARBALL=path checks another one.
  let filename;
  if (process.env.TARBALL) {
    filename = 'channel-sdk-' + JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version + '.tgz';
    cpSync(resolve(process.env.TARBALL), join(tmp, filename));
  } else {
    const t1 = performance.now();
    const { stdout: packed } = await run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: root });
    const [{ size, unpackedSize, ...info }] = JSON.parse(packed.slice(packed.indexOf('[')));
    filename = info.filename;
    rows.push({
      what: 'pack',
      tool: 'npm pack',
      version: npmVersion,
      ok: true,
      note: `${filename}: ${kb(size)} packed, ${kb(unpackedSize)} unpacked (prepack builds)`,
      seconds: (performance.now() - t1) / 1000,
    });
  }
  const tgz = join(tmp, filename);

  // --- installs -----------------------------------------------------------------------------
  const npmProject = project('npm');
  await check('plain `npm install <tgz>`: install weight ≤ 2.97 MiB, nothing but channel-sdk', 'npm', npmVersion, async () => {
    await run('npm', ['install', '--no-audit', '--no-fund', tgz], { cwd: npmProject });
    const installed = readdirSync(join(npmProject, 'node_modules')).filter((name) => !name.startsWith('.'));
    expectEqual(installed, ['channel-sdk'], 'node_modules');
    const bytes = diskUsage(join(npmProject, 'node_modules'));
    if (bytes > INSTALL_BUDGET) throw new Error(`install weight ${kb(bytes)} > ${kb(INSTALL_BUDGET)}`);
    return `${kb(bytes)} on disk (budget ${kb(INSTALL_BUDGET)})`;
  });
  await check('`npm install --engine-strict <tgz>`', 'npm', npmVersion, async () => {
    const dir = project('npm-engine-strict');
    const { stderr } = await run('npm', ['install', '--engine-strict', '--no-audit', '--no-fund', tgz], { cwd: dir });
    if (/EBADENGINE|engine/i.test(stderr)) throw new Error(stderr);
  });
  const yarnProject = project('yarn');
  await check('`yarn add <tgz>` (engines enforced)', 'yarn', versionOf('yarn'), async () => {
    const { stdout, stderr } = await run(process.execPath, [join(tools, 'yarn/bin/yarn.js'), 'add', tgz, '--non-interactive', '--no-progress'], {
      cwd: yarnProject,
      env: { YARN_CACHE_FOLDER: join(tmp, 'yarn-cache') },
    });
    if (/warning|error/i.test(stderr)) throw new Error(stdout + stderr);
  });
  const pnpmProject = project('pnpm');
  await check('`pnpm add <tgz>` (isolated layout)', 'pnpm', versionOf('pnpm'), async () => {
    await run(process.execPath, [join(tools, 'pnpm/bin/pnpm.cjs'), 'add', tgz, '--store-dir', join(tmp, 'pnpm-store'), '--config.confirmModulesPurge=false'], {
      cwd: pnpmProject,
    });
  });

  // --- loads --------------------------------------------------------------------------------
  const requireAll = `for (const e of ${JSON.stringify(ENTRIES)}) { const m = require(e); if (typeof (m.createClient || m.createTokenExchange || m.startSandbox || m.clientTelemetry) !== 'function') throw new Error(e + ': ' + Object.keys(m)); }`;
  const importAll = `for (const e of ${JSON.stringify(ENTRIES)}) { const m = await import(e); if (typeof (m.createClient || m.createTokenExchange || m.startSandbox || m.clientTelemetry) !== 'function') throw new Error(e + ': ' + Object.keys(m)); }`;
  for (const [label, binary, version] of [...nodes, floor]) {
    // Node 20.3 has no require(esm) at all, nor the flag that turns it off.
    const flag = binary === floor[1] ? [] : ['--no-experimental-require-module'];
    await check(`\`require()\` every entry${flag.length ? ' with ' + flag : ''}; \`import\` every entry`, label, version, async () => {
      await run(binary, [...flag, '-e', requireAll], { cwd: npmProject });
      await run(binary, ['--input-type=module', '-e', importAll], { cwd: npmProject });
    });
  }
  for (const [label, dir] of [
    ['yarn', yarnProject],
    ['pnpm', pnpmProject],
  ]) {
    await check(`the ${label} install: \`require()\` (no require(esm)) and \`import\` every entry`, 'Node 20', process.version.slice(1), async () => {
      await node(['--no-experimental-require-module', '-e', requireAll], { cwd: dir });
      await node(['--input-type=module', '-e', importAll], { cwd: dir });
    });
  }
  // Bun and Deno run the same file from the same node_modules (Deno 2 reads package.json).
  const bun = join(tools, '@oven/bun-linux-x64/bin/bun');
  const deno = join(tools, '@deno/linux-x64-glibc/deno');
  const others = [
    ['Bun', bun, versionOf('@oven/bun-linux-x64'), []],
    ['Deno', deno, versionOf('@deno/linux-x64-glibc'), ['run', '--allow-all']],
  ];
  const denoEnv = { DENO_DIR: join(tmp, 'deno-cache'), DENO_NO_UPDATE_CHECK: '1' };
  for (const [label, binary, version, args = []] of [...nodes, floor, ...others]) {
    await check('quick start (ESM): createClient against the sandbox, GET, POST, expire → one forced refresh', label, version, async () => {
      const result = lastJson((await run(binary, [...args, 'quick-start.mjs'], { cwd: npmProject, env: denoEnv })).stdout);
      expectEqual(result.runtime, (label === 'Bun' ? 'bun ' : label === 'Deno' ? 'deno ' : 'node ') + version, 'runtime');
      expectEqual(result.forced, [false, true], 'tokenProvider forceRefresh calls');
      expectEqual([result.unauthorized, result.echoed.method, result.again === result.orders, result.error], [1, 'POST', true, 'API_ERROR'], 'flow');
    });
  }
  await check('Jest, default CommonJS mode: a test using channel-sdk and channel-sdk/testing', 'jest', versionOf('jest'), async () => {
    const { stderr } = await node([join(tools, 'jest/bin/jest.js'), '--ci', '--rootDir', npmProject, '--testMatch', '**/quick-start.test.cjs'], {
      cwd: npmProject,
    });
    if (!/Tests:\s+1 passed, 1 total/.test(stderr)) throw new Error(stderr);
  });

  // --- TypeScript -----------------------------------------------------------------------------
  const base = { strict: true, skipLibCheck: false, noEmit: true, lib: ['ES2022', 'DOM'], types: ['node'], typeRoots: [join(tools, '@types')] };
  const modes = [
    ['node10 (module commonjs)', { module: 'commonjs', moduleResolution: 'node10' }, 'commonjs'],
    ['node16, CommonJS', { module: 'node16', moduleResolution: 'node16' }, 'commonjs'],
    ['node16, ESM', { module: 'node16', moduleResolution: 'node16' }, 'module'],
    ['nodenext', { module: 'nodenext', moduleResolution: 'nodenext' }, 'module'],
    ['bundler', { module: 'esnext', moduleResolution: 'bundler' }, 'module'],
  ];
  const typescripts = [
    ['TypeScript', join(tools, 'typescript/bin/tsc'), versionOf('typescript')],
    [
      'TypeScript (native)',
      join(root, 'node_modules/typescript/bin/tsc'),
      JSON.parse(readFileSync(join(root, 'node_modules/typescript/package.json'), 'utf8')).version,
    ],
  ];
  for (const [tool, tsc, version] of typescripts) {
    for (const [mode, options, type] of modes) {
      if (version.startsWith('7') && mode.startsWith('node10')) continue; // TypeScript 7 removed node10 resolution
      await check(`tsc --noEmit, ${mode}, skipLibCheck false: a file importing all five entries`, tool, version, async () => {
        const dir = join(npmProject, 'ts-' + mode.replace(/\W+/g, '-'));
        mkdirSync(dir, { recursive: true });
        cpSync(join(fixtures, 'consumer.ts'), join(dir, 'consumer.ts'));
        writeFileSync(join(dir, 'package.json'), JSON.stringify({ type }));
        writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...base, ...options }, files: ['consumer.ts'] }));
        await node([tsc, '-p', dir], { cwd: dir });
      });
    }
  }
  await check(
    'tsc --noEmit, a native mini-program project (miniprogram-api-typings, no DOM, no Node types), node10',
    'TypeScript',
    versionOf('typescript'),
    async () => {
      const dir = join(npmProject, 'ts-miniprogram');
      mkdirSync(dir, { recursive: true });
      cpSync(join(fixtures, 'miniprogram-host.ts'), join(dir, 'index.ts'));
      const compilerOptions = {
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        lib: ['ES2020'],
        module: 'commonjs',
        moduleResolution: 'node10',
        types: ['miniprogram-api-typings'],
        typeRoots: [tools],
      };
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['index.ts'] }));
      await node([join(tools, 'typescript/bin/tsc'), '-p', dir], { cwd: dir });
    },
  );

  // Issue #23: each host's own request/uploadFile/downloadFile, as its official typings declare
  // them, passed to createClient under strict TypeScript 5.9 (fixtures/host-types/), and a
  // JavaScript page checked with checkJs and the WeChat typings. skipLibCheck: the hosts' own
  // typings are not ours to fix (channel-sdk's .d.ts are checked without it above).
  const hostTypings = [
    ['wx (miniprogram-api-typings)', 'wx.ts', ['miniprogram-api-typings'], 'miniprogram-api-typings'],
    ['my (@mini-types/alipay)', 'my.ts', [], '@mini-types/alipay'],
    ['tt (@douyin-microapp/typings)', 'tt.ts', [], '@douyin-microapp/typings'],
    ['uni (@dcloudio/types)', 'uni.ts', [], '@dcloudio/types'],
    ['Taro (@tarojs/taro)', 'taro.ts', [], '@tarojs/taro'],
    ['wx, JavaScript with checkJs', 'wx-checkjs.js', ['miniprogram-api-typings'], 'miniprogram-api-typings'],
  ];
  for (const [host, file, types, typings] of hostTypings) {
    await check(
      `tsc --noEmit, strict: request, uploadFile and downloadFile of ${host} ${versionOf(typings)} passed to createClient, upload/download typed`,
      'TypeScript',
      versionOf('typescript'),
      async () => {
        const dir = join(npmProject, 'ts-host-' + file.replace(/\W+/g, '-'));
        mkdirSync(dir, { recursive: true });
        cpSync(join(fixtures, 'host-types', file), join(dir, file));
        const lib = /uni|taro/.test(file) ? ['ES2020', 'DOM'] : ['ES2020'];
        const compilerOptions = {
          strict: true,
          skipLibCheck: true,
          noEmit: true,
          allowJs: true,
          checkJs: true,
          lib,
          module: 'esnext',
          moduleResolution: 'bundler',
          types,
          typeRoots: [tools],
          baseUrl: '.',
          paths: { '*': [join(tools, '*')] },
        };
        writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: [file] }));
        await node([join(tools, 'typescript/bin/tsc'), '-p', dir], { cwd: dir });
      },
    );
  }

  // --- bundlers -------------------------------------------------------------------------------
  /** A production web build with the given webpack; webpack 4 hashes with md4, hence the legacy provider. */
  const webpack = async (dirName, entry) => {
    const out = join(npmProject, `out-${dirName}-${entry}`);
    const env = { NODE_OPTIONS: dirName === 'webpack4' ? '--openssl-legacy-provider' : '' };
    const { stdout } = await node([join(npmProject, 'webpack.cjs'), join(tools, dirName), './' + entry, out], { cwd: npmProject, env });
    return { ...lastJson(stdout), bundle: join(out, 'main.js') };
  };
  for (const [dirName, entry, target] of [
    ['webpack4', 'webpack-entry.js', 'channel-sdk/miniprogram'],
    ['webpack5', 'webpack-entry.js', 'channel-sdk/miniprogram'],
    ['webpack5', 'webpack-browser-entry.js', 'channel-sdk'],
  ]) {
    await check(`production web build of \`${target}\`: no error or warning, the bundle runs`, 'webpack', versionOf(dirName), async () => {
      const { errors, warnings, bundle } = await webpack(dirName, entry);
      if (errors.length || warnings.length) throw new Error([...errors, ...warnings].join('\n'));
      const code = readFileSync(bundle, 'utf8');
      // A page's <script>: webpack 5 finds where its lazy chunks live (crossTab's) from it.
      const sandbox = { document: { currentScript: { tagName: 'SCRIPT', src: 'https://app.example/static/main.js' }, getElementsByTagName: () => [] } };
      new Function('globalThis', 'self', 'window', code)(sandbox, sandbox, sandbox);
      expectEqual(
        Object.values(sandbox.channelSdk ?? {}).map((f) => typeof f),
        Array(target === 'channel-sdk' ? 2 : 3).fill('function'),
        'exports',
      );
      const lazy = readdirSync(dirname(bundle)).length - 1;
      return `${kb(code.length)} min` + (lazy ? ` + ${lazy} lazy chunk${lazy > 1 ? 's' : ''}` : '');
    });
  }
  // webpack 4 knows no `exports`: the folders server/, testing/ and miniprogram/ are how it
  // finds the subpaths. Its own resolver, configured as webpack 4 does for target web.
  const resolverPath = createRequire(join(tools, 'webpack4/package.json')).resolve('enhanced-resolve');
  const resolverVersion = JSON.parse(readFileSync(join(dirname(resolverPath), '../package.json'), 'utf8')).version;
  await check("webpack 4's resolver (no `exports`) finds every entry in dist/", 'enhanced-resolve (webpack 4.47)', resolverVersion, async () => {
    const { ResolverFactory, CachedInputFileSystem, NodeJsInputFileSystem } = await import(resolverPath);
    const resolver = ResolverFactory.createResolver({
      fileSystem: new CachedInputFileSystem(new NodeJsInputFileSystem(), 4000),
      mainFields: ['browser', 'module', 'main'],
      extensions: ['.wasm', '.mjs', '.js', '.json'],
      useSyncFileSystemCalls: true,
    });
    const found = ENTRIES.map((entry) => relative(join(npmProject, 'node_modules/channel-sdk'), resolver.resolveSync({}, npmProject, entry)));
    expectEqual(found, ['dist/index.js', 'dist/server.js', 'dist/testing.js', 'dist/miniprogram.js', 'dist/telemetry.js'], 'resolved');
    return found.join(', ');
  });
  // The documented limit (docs/guide/compatibility.md): webpack 4's parser predates ES2022, so the
  // browser entry needs a transpiling loader there. If this ever builds, the doc is stale.
  await check(
    'production web build of `channel-sdk` without a loader: refused (ES2022 class fields), as documented',
    'webpack',
    versionOf('webpack4'),
    async () => {
      const { errors } = await webpack('webpack4', 'webpack-browser-entry.js');
      if (!(errors.length === 1 && /Module parse failed/.test(errors[0]) && /channel-sdk\/dist\/index\.js/.test(errors[0])))
        throw new Error('expected one parse error in dist/index.js, got: ' + JSON.stringify(errors));
      return 'needs babel-loader (or similar) over node_modules/channel-sdk';
    },
  );

  // --- WeChat's npm build ---------------------------------------------------------------------
  await check(
    '`packNpm` of demo/miniprogram after a tarball install: one package, no warning, ES2017, the page runs; an upload and a download through what it wrote, each 401 → one refresh → sent again; the telemetry plug-in found and tracing',
    'miniprogram-ci',
    versionOf('miniprogram-ci'),
    async () => {
      // The sample installs `file:../../channel-sdk-<version>.tgz` (`npm pack` at the repository
      // root): the same layout here, then a plain `npm install` of the sample as it is.
      const repo = join(tmp, 'repo');
      const mp = join(repo, 'demo/miniprogram');
      cpSync(join(root, 'demo/miniprogram'), mp, { recursive: true, filter: (source) => !/node_modules|miniprogram_npm/.test(source) });
      cpSync(tgz, join(repo, filename));
      await run('npm', ['install', '--no-audit', '--no-fund'], { cwd: mp });
      const before = readdirSync(mp, { recursive: true }).filter((file) => !file.startsWith('node_modules'));
      // packNpm wants an appid and a signing key (used by upload/preview, not by the npm build): a throwaway one.
      const { generateKeyPairSync } = await import('node:crypto');
      const key = join(tmp, 'private.key');
      writeFileSync(key, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }));
      const script = `const ci = require(${JSON.stringify(join(tools, 'miniprogram-ci'))});
      const project = new ci.Project({ appid: 'wx0000000000000000', type: 'miniProgram', projectPath: ${JSON.stringify(mp)}, privateKeyPath: ${JSON.stringify(key)}, ignores: ['node_modules/**/*'] });
      const infos = [];
      ci.packNpm(project, { reporter: (info) => infos.push(info) }).then((warnings) => console.log(JSON.stringify({ warnings, infos })));`;
      const { warnings, infos } = lastJson((await node(['-e', script], { cwd: mp })).stdout);
      if (warnings.length) throw new Error('packNpm warnings: ' + JSON.stringify(warnings));
      const info = infos.at(-1);
      expectEqual(
        [info.miniprogram_pack_num, info.other_pack_num, info.warn_not_found_num, info.warn_require_var_num, info.warn_require_rename_num],
        [1, 0, 0, 0, 0],
        'packNpm report',
      );
      const written = readdirSync(mp, { recursive: true }).filter((file) => !file.startsWith('node_modules') && !before.includes(file));
      const files = written.filter((file) => statSync(join(mp, file)).isFile());
      if (!written.every((file) => file.startsWith('miniprogram_npm'))) throw new Error('packNpm wrote outside miniprogram_npm/: ' + written);
      expectEqual(readdirSync(join(mp, 'miniprogram_npm')), ['channel-sdk'], 'miniprogram_npm/');
      for (const file of files) parse(readFileSync(join(mp, file), 'utf8'), { ecmaVersion: 2017, sourceType: 'script' });
      // The page's flows on what was written, with a faithful wx (test/helpers/hosts.ts) as the only host API.
      const hosts = join(mp, 'hosts.mjs');
      await build({ entryPoints: [join(root, 'test/helpers/hosts.ts')], bundle: true, outfile: hosts, format: 'esm', platform: 'node', logLevel: 'silent' });
      cpSync(join(fixtures, 'miniprogram-flows.mjs'), join(mp, 'flows.mjs'));
      const { realmHas, flows } = lastJson((await node(['flows.mjs', mp, hosts], { cwd: mp })).stdout);
      expectEqual(realmHas, [], 'host APIs in the realm besides wx');
      expectEqual(flows.call.counters, { provider: 1, unauthorized: 0, retries: 0, ok: 1, failed: 0 }, 'call');
      expectEqual(
        [flows.expire.counters, flows.expire.forced, flows.expire.unauthorized],
        [{ provider: 2, unauthorized: 1, retries: 1, ok: 2, failed: 0 }, [false, true], 1],
        'expire → one forced refresh',
      );
      expectEqual([flows.burst.counters.ok, flows.burst.counters.provider, flows.burst.hostCalls - flows.expire.hostCalls], [7, 2, 5], 'burst of 5');
      expectEqual([flows.cancel.counters.failed, flows.cancel.aborted, flows.cancel.lastLine.startsWith('ABORTED')], [1, 1, true], 'cancel on page unload');
      const { files: f } = flows;
      expectEqual(
        [f.forced, f.dataCalls, f.unauthorized],
        [[false, true, true], 4, 2],
        'files: an upload and a download on expired tokens → one forced refresh each',
      );
      expectEqual(
        [f.uploads, f.uploadTokens, f.downloads, f.downloadTokens, f.echoed],
        [2, 2, 2, 2, true],
        'files: wx.uploadFile and wx.downloadFile each called twice (old token, refreshed token), the multipart body intact',
      );
      expectEqual(
        [f.download.statusCode, f.download.file.startsWith('{"code":0,"data":{"method":"GET"')],
        [200, true],
        "files: the downloaded file is the replay's, never the 401 body (" + f.download.file + ')',
      );
      for (const seen of [f.progress.upload, f.progress.download]) {
        expectEqual(
          [seen.length > 0, seen.every((p, i) => i === 0 || p >= seen[i - 1]), seen.at(-1), seen.filter((p) => p === 1).length],
          [true, true, 1, 1],
          'files: onProgress non-decreasing across the replay, 1 once at the end ' + JSON.stringify(seen),
        );
      }
      expectEqual(
        flows.telemetry,
        {
          spans: [
            ['channel.token_provider', false, true],
            ['GET', 200, true],
          ],
          traceparent: ['00-0af7651916cd43dd8448eb211c80319c-0000000000000002-01'],
        },
        "telemetry: require('channel-sdk/telemetry') finds the plug-in in what packNpm wrote; a span per attempt, its traceparent sent",
      );
      return `wrote ${files.map((file) => `${file} (${kb(statSync(join(mp, file)).size)})`).join(', ')}`;
    },
  );

  // Taro 4 / uni-app builds, when that script is present (written separately).
  const frameworks = join(here, 'miniprogram-frameworks.mjs');
  if (existsSync(frameworks)) {
    await check('Taro 4 / uni-app builds (test/consumers/miniprogram-frameworks.mjs)', 'see its table', '', async () => {
      const { stdout } = await node([frameworks, tgz], { cwd: root, timeout: 1_800_000 });
      return '\n\n' + stdout.trim();
    });
  }
} catch (error) {
  rows.push({ what: 'stage set-up', tool: '', version: '', ok: false, note: error.message, seconds: 0 });
} finally {
  if (!process.env.KEEP_TMP) rmSync(tmp, { recursive: true, force: true });
}

const cell = (text) => String(text).replaceAll('|', '\\|').replaceAll('\n', '<br>');
const table = rows.map(
  (row) =>
    `| ${cell(row.what)} | ${cell(row.tool)} | ${cell(row.version)} | ${row.ok ? 'ok' : '**FAILED**'} | ${row.seconds.toFixed(1)} | ${cell(row.note.startsWith('\n') ? '' : row.note)} |`,
);
console.log('| check | tool | version | result | s | notes |\n|---|---|---|---|---|---|\n' + table.join('\n'));
for (const row of rows.filter((r) => r.note.startsWith('\n'))) console.log(row.note);
console.log(
  `\n${rows.filter((r) => r.ok).length} of ${rows.length} checks passed in ${((performance.now() - started) / 1000).toFixed(0)} s` +
    (process.env.KEEP_TMP ? ` (projects kept in ${tmp})` : ''),
);
if (rows.some((row) => !row.ok)) process.exit(1);
