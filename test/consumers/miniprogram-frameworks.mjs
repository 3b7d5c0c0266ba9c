#!/usr/bin/env node
/**
 * Taro 4 and uni-app (Vue 3, vite) build a page that uses channel-sdk/miniprogram for WeChat,
 * and the built output runs: `node test/consumers/miniprogram-frameworks.mjs <channel-sdk.tgz>`.
 *
 * For each framework: copy its pinned project (test/consumers/taro, test/consumers/uniapp; the
 * page's code is test/consumers/shared/scenario.js) to a fresh directory, install it (the CLI
 * and its toolchain, pinned by the project's own package-lock.json), `npm install` the
 * tarball, build for WeChat with the real CLI, then run the build's app.js and first page in a
 * node:vm WeChat logic layer (mp-runtime.mjs) whose `wx.request`, `wx.uploadFile` and
 * `wx.downloadFile` go over real HTTP (test/helpers/hosts.ts) to the installed package's own
 * sandbox. Checks: the page's call works; after `sandbox.expireTokens()` one 401 leads to one
 * forced refresh and one retry; every SDK request went through `wx.request`, which
 * createClient found by itself (the page passes no `request`); an upload (through the
 * framework's own uploadFile, to the sandbox's echo route) and a download (wx.downloadFile,
 * found by createClient), each on an expired token, are sent once more after one forced
 * refresh, the multipart body arrives intact, the downloaded file is the replay's (never the
 * 401 body) and progress never goes back; the page re-rendered with the result. Prints a markdown table and
 * exits non-zero on any failure. `--keep` keeps the work directories; `--only taro|uniapp`;
 * `--only X --built DIR` reruns only the run step on a work directory kept earlier.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build as esbuild } from 'esbuild';
import { launch } from './mp-runtime.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');

export const FRAMEWORKS = [
  {
    id: 'taro',
    tool: 'Taro 4 (React, webpack 5)',
    command: ['taro', 'build', '--type', 'weapp'],
    output: 'dist',
    versions: ['@tarojs/cli', 'webpack'],
  },
  {
    id: 'uniapp',
    tool: 'uni-app (Vue 3, vite)',
    command: ['uni', 'build', '-p', 'mp-weixin'],
    output: 'dist/build/mp-weixin',
    versions: ['@dcloudio/vite-plugin-uni', 'vite'],
  },
];

const progress = (text) => writeSync(2, `[miniprogram-frameworks ${(performance.now() / 1000).toFixed(0)}s] ${text}\n`);

/** Runs a command in `cwd`, its output to `log`; resolves to { code, seconds }. */
function run(cwd, command, commandArgs, log) {
  const started = performance.now();
  return new Promise((done) => {
    const child = spawn(command, commandArgs, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        npm_config_loglevel: 'error',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        npm_config_update_notifier: 'false',
        FORCE_COLOR: '0',
        NO_COLOR: '1',
      },
    });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('error', (error) => chunks.push(Buffer.from(String(error))));
    child.on('close', (code) => {
      writeFileSync(log, Buffer.concat(chunks));
      done({ code, seconds: (performance.now() - started) / 1000 });
    });
  });
}

function diskMegabytes(dir) {
  return new Promise((done) => {
    const du = spawn('du', ['-sk', dir], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    du.stdout.on('data', (c) => (out += c));
    du.on('close', () => done(Number.parseInt(out, 10) / 1024));
  });
}

const ansi = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g'); // progress bars' escapes
const tail = (file, lines = 25) => (existsSync(file) ? readFileSync(file, 'utf8').replace(ansi, '').trim().split('\n').slice(-lines).join('\n') : '');
const versionOf = (work, name) => JSON.parse(readFileSync(join(work, 'node_modules', name, 'package.json'), 'utf8')).version;

/** Packages whose installed version differs from the committed lockfile (missing optional ones aside). */
function lockDrift(locked, work) {
  const installed = JSON.parse(readFileSync(join(work, 'node_modules/.package-lock.json'), 'utf8')).packages;
  return Object.entries(locked.packages)
    .filter(([path, entry]) => path !== '' && !(entry.optional && !installed[path]) && installed[path]?.version !== entry.version)
    .map(([path, entry]) => `${path}: locked ${entry.version}, installed ${installed[path]?.version ?? 'nothing'}`);
}

/** The host emulator of the unit tests (test/helpers/hosts.ts), compiled for plain Node. */
export async function loadHostEmulator() {
  const result = await esbuild({
    entryPoints: [join(repo, 'test/helpers/hosts.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    logLevel: 'silent',
  });
  return import(`data:text/javascript;base64,${Buffer.from(result.outputFiles[0].text).toString('base64')}`);
}

/**
 * The `wx` a built app meets: request(), uploadFile() and downloadFile() from the host
 * emulator (real HTTP, WeChat's callback semantics, mixed-case response headers, 10 of each
 * at most; multipart from a file on disk, downloads to temp files), storage that keeps a
 * JSON copy as WeChat does, and the read-only system queries the frameworks make at startup.
 */
export function createWx(host, storage = new Map()) {
  const systemInfo = {
    brand: 'devtools',
    model: 'iPhone 12',
    pixelRatio: 3,
    screenWidth: 390,
    screenHeight: 844,
    windowWidth: 390,
    windowHeight: 844,
    statusBarHeight: 47,
    language: 'zh_CN',
    version: '8.0.50',
    system: 'iOS 16.0',
    platform: 'devtools',
    SDKVersion: '3.5.0',
    safeArea: { top: 47, left: 0, right: 390, bottom: 810, width: 390, height: 763 },
    theme: 'light',
    enableDebug: false,
  };
  const copy = (value) => (value === undefined ? '' : JSON.parse(JSON.stringify(value)));
  return {
    storage,
    wx: {
      request: (options) => host.request(options),
      uploadFile: (options) => host.uploadFile(options),
      downloadFile: (options) => host.downloadFile(options),
      getStorageSync: (key) => (storage.has(key) ? copy(storage.get(key)) : ''),
      setStorageSync: (key, value) => void storage.set(key, copy(value)),
      removeStorageSync: (key) => void storage.delete(key),
      getSystemInfoSync: () => ({ ...systemInfo }),
      getWindowInfo: () => ({ ...systemInfo }),
      getDeviceInfo: () => ({ ...systemInfo }),
      getAppBaseInfo: () => ({ ...systemInfo }),
    },
  };
}

/** Captures what the built app logs, shown only when the run fails. */
export function captureConsole(lines) {
  const record =
    (level) =>
    (...parts) =>
      lines.push(`${level}: ${parts.map((p) => (typeof p === 'string' ? p : (JSON.stringify(p) ?? String(p)))).join(' ')}`);
  return { log: record('log'), info: record('info'), warn: record('warn'), error: record('error'), debug: record('debug') };
}

export async function waitFor(read, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = read();
    if (value) return value;
    if (Date.now() > deadline) return undefined;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs the built app against the installed package's sandbox; resolves to a list of failures. */
async function runBuilt(work, framework, emulator) {
  // channel-sdk/testing and /server as the project resolves them (import conditions).
  writeFileSync(
    join(work, 'harness-imports.mjs'),
    "export { startSandbox, SANDBOX_PATHS } from 'channel-sdk/testing';\nexport { createTokenExchange } from 'channel-sdk/server';\n",
  );
  const { startSandbox, SANDBOX_PATHS, createTokenExchange } = await import(pathToFileURL(join(work, 'harness-imports.mjs')).href);
  const sandbox = await startSandbox();
  // forceRefreshWindow 0: the flows expire tokens again seconds after a forced refresh, which the
  // service never does; the window would hand the just-expired forced token back (docs/guide/sandbox.md).
  const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials, forceRefreshWindow: 0 });
  const forced = [];
  // The partner backend the page asks for tokens: exchange as createTokenExchange does.
  const backend = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const send = (status, body) => (res.writeHead(status, { 'content-type': 'application/json' }), res.end(JSON.stringify(body)));
    try {
      if (url.pathname === '/channel-token') {
        forced.push(url.searchParams.get('force') === '1');
        const { accessToken } = await exchange.getToken(`${framework.id}-user`, { forceRefresh: url.searchParams.get('force') === '1' });
        return send(200, { access_token: accessToken });
      }
      if (url.pathname === '/expire' && req.method === 'POST') {
        sandbox.expireTokens();
        return send(200, { ok: true });
      }
      send(404, { error: 'not found' });
    } catch (error) {
      send(500, { error: String(error) });
    }
  });
  await new Promise((r) => backend.listen(0, '127.0.0.1', r));
  const backendUrl = `http://127.0.0.1:${backend.address().port}`;

  const failures = [];
  const logs = [];
  const asyncErrors = [];
  const onRejection = (error) => asyncErrors.push(error);
  process.on('unhandledRejection', onRejection);
  try {
    const host = emulator.createHost('wx');
    const { wx, storage } = createWx(host);
    // The photo the page uploads, as wx.chooseMedia would leave it on the device.
    const uploadFilePath = join(work, 'photo-upload.txt');
    const photo = Array.from({ length: 3000 }, (_, i) => `line ${i} of the ${framework.id} photo\n`).join('');
    writeFileSync(uploadFilePath, photo);
    storage.set('channel-sdk-e2e', { sandboxUrl: sandbox.url, backendUrl, ordersPath: SANDBOX_PATHS.orders, echoPath: SANDBOX_PATHS.echo, uploadFilePath });
    const app = launch(join(work, framework.output), { wx, console: captureConsole(logs) });
    const page = app.openPage(app.pages[0]);
    const report = await waitFor(() => storage.get('channel-sdk-e2e-report'), 20_000);
    // The page shows the outcome: give the framework's render (setData) a moment to land.
    const rendered = await waitFor(() => JSON.stringify(page.data).includes('"ok"'), 2_000);

    const sdkCalls = host.calls.filter((options) => options.url.startsWith(sandbox.url));
    const bearer = sdkCalls.map((options) => Object.entries(options.header ?? {}).find(([name]) => name.toLowerCase() === 'authorization')?.[1] ?? '');
    const check = (ok, what) => ok || failures.push(what);
    check(
      app.errors.length === 0 && asyncErrors.length === 0,
      `no error while the app and page ran: ${[...app.errors, ...asyncErrors].map((e) => e?.stack ?? e).join('\n')}`,
    );
    check(report !== undefined, 'the page wrote its report within 20 s');
    if (report) {
      check(report.error === undefined, `the page's calls succeeded: ${report.error}`);
      check(
        report.first > 0 && report.afterExpiry === report.first,
        `the page's call returned the orders before and after expiry (${report.first}, ${report.afterExpiry})`,
      );
      check(
        JSON.stringify(report.provider) === '[false,true,true,true]',
        `tokenProvider ran once, then once forced after each 401 (the call, the upload, the download) (saw ${JSON.stringify(report.provider)})`,
      );
      check(report.unauthorized === 3 && report.retries === 3, `three 401s, each sent once more (saw ${report.unauthorized} 401s, ${report.retries} retries)`);
    }
    check(
      JSON.stringify(forced) === '[false,true,true,true]',
      `the backend saw one token request, then one ?force=1 per expiry (the call, the upload, the download) (saw ${JSON.stringify(forced)})`,
    );
    check(
      sandbox.stats.unauthorized === 3 && sandbox.stats.dataCalls === 7,
      `the sandbox saw 7 data calls (call, then 401 + retry for the call, the upload and the download) and three 401s (saw ${sandbox.stats.dataCalls}, ${sandbox.stats.unauthorized})`,
    );
    check(
      sdkCalls.length === 3 && bearer.every((value) => /^Bearer \S+$/.test(value)),
      `createClient found wx.request by itself: all 3 data calls went through it with a Bearer token (saw ${sdkCalls.length})`,
    );
    check(bearer[0] === bearer[1] && bearer[1] !== bearer[2], 'the call after expiry went out with the old token, its retry with the refreshed one');
    // The files: through wx.uploadFile (reached by the framework's own uploadFile) and
    // wx.downloadFile (found by createClient), each sent twice: the 401, then the replay.
    const fileBearer = (calls) => calls.map((options) => options.header?.authorization ?? '');
    const [uploads, downloads] = [fileBearer(host.uploads), fileBearer(host.downloads)];
    check(
      uploads.length === 2 && uploads[0] === bearer[2] && /^Bearer \S+$/.test(uploads[1]) && uploads[1] !== uploads[0],
      `the upload went through wx.uploadFile with the expired token, then once more with a refreshed one (saw ${uploads.length} uploads)`,
    );
    check(
      downloads.length === 2 && downloads[0] === uploads[1] && /^Bearer \S+$/.test(downloads[1]) && downloads[1] !== downloads[0],
      `the download went through wx.downloadFile with the expired token, then once more with a refreshed one (saw ${downloads.length} downloads)`,
    );
    check(
      host.uploads.every((options) => options.filePath === uploadFilePath && options.name === 'photo' && options.formData?.order_no === 'SO20240601001'),
      'wx.uploadFile got the filePath, the field name and formData',
    );
    if (report?.upload) {
      const { method, body } = report.upload;
      check(
        method === 'POST' && body.includes('name="photo"') && body.includes(photo) && /name="order_no"\r\n\r\nSO20240601001\r\n/.test(body),
        `the sandbox received the multipart upload, file bytes and field intact (saw ${method}, ${body.length} characters)`,
      );
    }
    if (report?.download) {
      const { statusCode, tempFilePath } = report.download;
      const saved = tempFilePath && existsSync(tempFilePath) ? readFileSync(tempFilePath, 'utf8') : '';
      check(
        statusCode === 200 && /"method":"GET"/.test(saved) && saved.startsWith('{"code":0,'),
        `the download resolved to the replay's file, never the 401's body (statusCode ${statusCode}, file ${JSON.stringify(saved.slice(0, 80))})`,
      );
    }
    for (const [what, seen] of [
      ['upload', report?.uploadProgress],
      ['download', report?.downloadProgress],
    ]) {
      const ok =
        Array.isArray(seen) &&
        seen.length > 0 &&
        seen.every((p, i) => i === 0 || p >= seen[i - 1]) &&
        seen.at(-1) === 1 &&
        seen.filter((p) => p === 1).length === 1;
      check(ok, `the ${what}'s onProgress never went back across the replay and ended at 1 once (saw ${JSON.stringify(seen)})`);
    }
    check(Boolean(rendered), `the page rendered the result through setData (${page.setDataCalls} setData calls)`);
  } catch (error) {
    failures.push(`the built app threw: ${error?.stack ?? error}`);
  } finally {
    process.off('unhandledRejection', onRejection);
    await sandbox.close();
    await new Promise((r) => backend.close(r));
  }
  if (failures.length > 0 && logs.length > 0) failures.push(`app console:\n${logs.slice(-30).join('\n')}`);
  return failures;
}

async function runFramework(framework, emulator, { tgz, keep }) {
  const row = { tool: framework.tool, version: '', install: '', size: '', build: 'not run', run: 'not run', buildSeconds: '', total: '', failures: [] };
  const started = performance.now();
  const work = mkdtempSync(join(tmpdir(), `channel-sdk-${framework.id}-`));
  const fail = (step, log) => row.failures.push(`${step} failed (log: ${log})\n${tail(log)}`);
  try {
    cpSync(join(here, framework.id), work, { recursive: true, filter: (src) => !/[\\/](node_modules|dist)$/.test(src) });
    cpSync(join(here, 'shared/scenario.js'), join(work, 'src/channel-scenario.js'));

    // `npm install` from the committed lockfile rather than `npm ci`: the registry this runs
    // against lacks some other platforms' optional binaries (@rollup/rollup-darwin-arm64 for
    // rollup 4.68.7, @tarojs/binding-darwin-arm64 4.2.1, ...), which `npm ci` reports as
    // "Missing: ... from lock file" and refuses. lockDrift() then proves the lock was honoured.
    progress(`${framework.id}: npm install (from package-lock.json) in ${work}`);
    const locked = JSON.parse(readFileSync(join(work, 'package-lock.json'), 'utf8'));
    const ci = await run(work, 'npm', ['install'], join(work, 'npm-install.log'));
    if (ci.code !== 0) return (fail('npm install', join(work, 'npm-install.log')), row);
    const drift = lockDrift(locked, work);
    if (drift.length > 0) return (row.failures.push(`the install left package-lock.json: ${drift.slice(0, 10).join('; ')}`), row);
    row.install = ci.seconds.toFixed(0);
    row.size = (await diskMegabytes(join(work, 'node_modules'))).toFixed(0);
    row.version = framework.versions.map((name) => `${name} ${versionOf(work, name)}`).join(', ');

    progress(`${framework.id}: npm install ${tgz}`);
    const add = await run(work, 'npm', ['install', tgz], join(work, 'npm-install-tgz.log'));
    if (add.code !== 0) return (fail('npm install <tgz>', join(work, 'npm-install-tgz.log')), row);

    progress(`${framework.id}: ${framework.command.join(' ')}`);
    const [bin, ...binArgs] = framework.command;
    const compiled = await run(work, join(work, 'node_modules/.bin', bin), binArgs, join(work, 'build.log'));
    row.buildSeconds = compiled.seconds.toFixed(1);
    if (compiled.code !== 0 || !existsSync(join(work, framework.output, 'app.js'))) {
      row.build = `failed (exit ${compiled.code})`;
      return (fail(framework.command.join(' '), join(work, 'build.log')), row);
    }
    row.build = 'ok';

    progress(`${framework.id}: running ${framework.output}/app.js and its first page`);
    const failures = await runBuilt(work, framework, emulator);
    row.run = failures.length === 0 ? 'ok: call, upload and download each 401 → one forced refresh → sent again; wx detected' : 'failed';
    row.failures.push(...failures);
    return row;
  } catch (error) {
    row.failures.push(String(error?.stack ?? error));
    return row;
  } finally {
    row.total = ((performance.now() - started) / 1000).toFixed(0);
    if (keep || row.failures.length > 0) progress(`${framework.id}: work directory kept: ${work}`);
    else rmSync(work, { recursive: true, force: true });
    progress(`${framework.id}: done`);
  }
}

// As a script; test/readme/quick-starts.mjs imports the machinery above for the quick starts.
if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) await main();

async function main() {
  const args = process.argv.slice(2);
  const keep = args.includes('--keep');
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
  const built = args.includes('--built') ? resolve(args[args.indexOf('--built') + 1]) : undefined;
  const tarball = args.find((arg) => arg.endsWith('.tgz'));
  const known = only === undefined || FRAMEWORKS.some((f) => f.id === only);
  if (!known || (built ? !only : !tarball || !existsSync(tarball))) {
    process.stderr.write(
      'usage: node test/consumers/miniprogram-frameworks.mjs <path-to-channel-sdk.tgz> [--keep] [--only taro|uniapp [--built DIR]]\n(make one with `npm run build && npm pack`)\n',
    );
    process.exit(2);
  }
  const tgz = tarball && resolve(tarball);
  const emulator = await loadHostEmulator();
  if (built) {
    const failures = await runBuilt(
      built,
      FRAMEWORKS.find((f) => f.id === only),
      emulator,
    );
    process.stdout.write(failures.length === 0 ? 'run: ok\n' : `run failed:\n${failures.join('\n')}\n`);
    process.exit(failures.length === 0 ? 0 : 1);
  }
  const rows = [];
  for (const framework of FRAMEWORKS.filter((f) => !only || f.id === only)) rows.push(await runFramework(framework, emulator, { tgz, keep }));

  const lines = [
    `channel-sdk: ${tgz?.split('/').pop()}, Node ${process.version}`,
    '',
    '| tool | version | install (s) | node_modules (MB) | build | run | build (s) | all steps (s) |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.tool} | ${r.version} | ${r.install} | ${r.size} | ${r.build} | ${r.run} | ${r.buildSeconds} | ${r.total} |`),
    '',
  ];
  for (const r of rows) for (const failure of r.failures) lines.push(`FAIL ${r.tool}: ${failure}`, '');
  process.stdout.write(`${lines.join('\n')}\n`);
  process.exitCode = rows.every((r) => r.failures.length === 0) ? 0 : 1;
}
