// `npm run test:examples` (issue #23): every example of the README, run in fresh projects
// exactly the way the README tells a reader to, from the packed tarball.
//
// The README's `<!-- try -->` sh blocks are the instructions; this script reads and runs them
// line by line in a new folder (the first block sets the folder up, as the README says): each
// file an example block shows is written there as shown, `npm install <names>` installs the
// packed .tgz for channel-sdk and each other package at a pinned version, `export` sets the
// variables, a command ending in `&` keeps running in the background, and a `# prints: …`
// comment is what the command must print. Only what a test cannot do as written changes:
//   - servers bind port 0 (`channel-sandbox start` gets `--port 0 --json`, `npx tsx server.ts`
//     gets PORT=0) and the README's http://127.0.0.1:8787 and :3000 mean the ports they got;
//   - `npx` gets `--no`, so a package the README forgot to install fails instead of downloading.
// Then what the README leaves to the reader's own tools: the web page opened in Chromium,
// signed in; the mini-program page through WeChat's npm build (miniprogram-ci packNpm) in a
// WeChat-like realm whose `wx.request` is real HTTP (test/helpers/hosts.ts); the Redis token
// cache imported by two processes of "your backend" against a real redis-server.
// Prints one table; exits 1 if any check failed. KEEP_TMP=1 keeps the projects; TARBALL=path
// checks that tarball instead of packing.
import { execFile, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { readmeBlocks } from '../../scripts/readme.mjs';
import { startRedis } from '../helpers/redis-server.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const started = performance.now();
const tmp = mkdtempSync(join(tmpdir(), 'channel-sdk-examples-'));
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const blocks = readmeBlocks(readme);
/** The README's example blocks by file name: what a reader copies. */
const shown = new Map(blocks.filter((b) => b.marker === 'example').map((b) => [basename(b.argument), { path: b.argument, code: b.code }]));
const tries = blocks.filter((b) => b.marker === 'try');

// The versions a reader gets today, pinned: the repository's own devDependencies where it has
// them (express, zod, ioredis, esbuild), else here.
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const pins = { ...rootPackage.devDependencies, tsx: '4.23.15' };
// The README's addresses for the two servers a reader starts (the sandbox's default port, PORT's default in server.ts).
const README_SANDBOX = 'http://127.0.0.1:8787';
const README_BACKEND = 'http://127.0.0.1:3000';
const userEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));

const rows = [];
async function check(what, body) {
  const t0 = performance.now();
  try {
    const note = await body();
    rows.push({ what, ok: true, note: note ?? '', seconds: (performance.now() - t0) / 1000 });
  } catch (error) {
    rows.push({ what, ok: false, note: error.message, seconds: (performance.now() - t0) / 1000 });
  }
}
const fail = (message) => {
  throw new Error(message);
};
function expectEqual(actual, expected, what) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) fail(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

/** Runs a command to its end; resolves to its stdout, or rejects with the tail of its output. */
function run(command, args, { cwd, env = {}, timeout = 300_000 }) {
  return new Promise((resolvePromise, reject) => {
    execFile(command, args, { cwd, env: { ...userEnv, ...env }, timeout, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (!error) return resolvePromise(stdout);
      const output = (stdout + '\n' + stderr).trim().split('\n').slice(-25).join('\n');
      reject(new Error(`${command} ${args.join(' ')} (in ${relative(tmp, cwd)}): ${error.killed ? 'timed out' : 'exit ' + error.code}\n${output}`));
    });
  });
}

const background = [];
/**
 * Starts a long-running command in a process group of its own; resolves once a stdout line
 * matches `ready` (to the match), rejects if it exits or says nothing matching in time.
 */
function start(command, args, { cwd, env = {}, ready, timeout = 60_000 }) {
  const child = spawn(command, args, { cwd, env: { ...userEnv, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  background.push(child);
  let output = '';
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${command} ${args.join(' ')}: nothing matching ${ready} within ${timeout / 1000} s:\n${output.slice(-2000)}`)),
      timeout,
    );
    const onData = (chunk) => {
      output += chunk;
      const match = ready.exec(output);
      if (match) {
        clearTimeout(timer);
        resolvePromise(match);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} ${args.join(' ')} exited (${code}) before it was ready:\n${output.slice(-2000)}`));
    });
  });
}
async function stopAll() {
  for (const child of background) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((done) => child.once('exit', done));
    try {
      process.kill(-child.pid, 'SIGTERM'); // its group: npx and what it started
    } catch {
      continue;
    }
    await Promise.race([exited, new Promise((done) => setTimeout(done, 5000))]);
  }
}

// --- the README's sh lines --------------------------------------------------------------------

/** Splits a line into words (quotes kept together and removed) and its `# comment`. */
function parseLine(line) {
  const words = [];
  let word = null;
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = '';
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (c === '#' && word === null) {
      return { words, comment: line.slice(i + 1).trim() };
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (quote) fail('unbalanced quote in README line: ' + line);
  if (word !== null) words.push(word);
  return { words, comment: '' };
}

/** What a reader's shell in the README's folder holds: its variables, and the servers' real URLs. */
function shell(cwd, tgz) {
  const env = {};
  const serverEnv = {};
  const urls = new Map();
  const real = (text) => [...urls].reduce((t, [said, actual]) => t.replaceAll(said, actual), text);
  const printed = [];

  async function command(words, { inBackground, prints }) {
    const assignments = [];
    while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) assignments.push(words.shift());
    const own = Object.fromEntries(assignments.map((a) => [a.slice(0, a.indexOf('=')), real(a.slice(a.indexOf('=') + 1))]));
    const [program, ...args] = words.map(real);
    if (program === 'export') {
      for (const a of args) env[a.slice(0, a.indexOf('='))] = a.slice(a.indexOf('=') + 1);
      return;
    }
    if (program === 'echo' && args.length === 3 && args[1] === '>') {
      // As sh does: the folder must exist already.
      if (!existsSync(dirname(join(cwd, args[2])))) fail(`echo … > ${args[2]}: no such directory (the README must create it first)`);
      writeFileSync(join(cwd, args[2]), args[0] + '\n');
      return;
    }
    if (program === 'npm' && ['install', 'i'].includes(args[0])) {
      const specs = args.slice(1).map((name) => {
        if (name.startsWith('-')) return name;
        if (name === 'channel-sdk') return tgz;
        if (!pins[name]) fail(`the README installs ${name}: pin its version in test/readme/fresh-projects.mjs`);
        return `${name}@${pins[name]}`;
      });
      await run('npm', ['install', '--no-audit', '--no-fund', ...specs], { cwd, env: { ...env, ...own } });
      return;
    }
    if (program === 'npm' && ['init', 'pkg'].includes(args[0])) {
      await run('npm', args, { cwd, env: { ...env, ...own } });
      return;
    }
    if (program !== 'npx') fail(`this stage does not know how to run \`${words.join(' ')}\`: teach it, or write the README line differently`);
    const npx = ['--no', ...args];
    if (inBackground && args[0] === 'channel-sandbox' && args[1] === 'start') {
      const [line] = await start('npx', [...npx, '--port', '0', '--json'], { cwd, env: { ...env, ...own }, ready: /^\{"event":"ready".*\}$/m });
      urls.set(README_SANDBOX, JSON.parse(line).url);
      return;
    }
    if (inBackground) {
      // It says where it listens; README_BACKEND is that address.
      const expected = prints
        ? new RegExp(prints.replaceAll(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(README_BACKEND.replaceAll('.', '\\.'), '(http://127\\.0\\.0\\.1:\\d+)'))
        : /(http:\/\/127\.0\.0\.1:\d+)/;
      const match = await start('npx', npx, { cwd, env: { ...env, ...own, PORT: '0', ...serverEnv }, ready: expected });
      urls.set(README_BACKEND, match[1]);
      return;
    }
    const stdout = await run('npx', npx, { cwd, env: { ...env, ...own } });
    printed.push(stdout);
    if (prints && stdout.trim() !== real(prints))
      fail(`\`${words.join(' ')}\` printed ${JSON.stringify(stdout.trim())}, the README says ${JSON.stringify(prints)}`);
  }

  return {
    env,
    urls,
    real,
    /** Variables for the servers only (what the stand-ins read). */
    serverEnv,
    /** Runs one README line: commands joined by &&, maybe ending in & (background). */
    async line(text) {
      const { words, comment } = parseLine(text);
      if (!words.length) return;
      const inBackground = words.at(-1) === '&';
      if (inBackground) words.pop();
      const prints = /(?:^|; )prints: (.*)$/.exec(comment)?.[1];
      const commands = [[]];
      for (const w of words) {
        if (w === '&&') commands.push([]);
        else commands.at(-1).push(w);
      }
      for (const [i, c] of commands.entries()) {
        const last = i === commands.length - 1;
        await command(c, { inBackground: inBackground && last, prints: last ? prints : undefined });
      }
    },
  };
}

/** Writes the files a `try` block names, as the README shows them, and the reader's own files they import. */
function writeExamples(dir, paths, edit = (name, code) => code) {
  for (const path of paths) {
    const name = basename(path);
    const example = shown.get(name);
    if (!example || example.path !== path) fail(`a try block names ${path}, which the README does not show`);
    writeFileSync(join(dir, name), edit(name, example.code));
    // Your code, which the README leaves to you: its stand-ins.
    for (const [, imported] of example.code.matchAll(/from '\.\/([\w-]+)\.js'/g)) {
      if (!shown.has(imported + '.ts')) cpSync(join(root, dirname(path), imported + '.ts'), join(dir, imported + '.ts'));
    }
  }
}

// --- the run ---------------------------------------------------------------------------------

try {
  const npmVersion = (await run('npm', ['--version'], { cwd: tmp })).trim();
  let tgz;
  await check(`pack (npm ${npmVersion})`, async () => {
    if (process.env.TARBALL) {
      tgz = join(tmp, basename(process.env.TARBALL));
      cpSync(resolve(process.env.TARBALL), tgz);
      return 'TARBALL=' + process.env.TARBALL;
    }
    const packed = await run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: root });
    const [{ filename }] = JSON.parse(packed.slice(packed.indexOf('[')));
    tgz = join(tmp, filename);
    return filename;
  });
  if (!tgz) throw new Error('no tarball');

  // Every example the README shows is run below, by a try block or by its own check.
  const ranByTry = new Set(tries.flatMap((b) => (b.argument ?? '').split(/\s+/).filter(Boolean)));
  const ranHere = ['examples/miniprogram-page.js', 'examples/miniprogram-files.js', 'examples/redis-token-cache.ts'];
  await check('every README example is run in a fresh project (a `try` block, or a check of its own here)', async () => {
    const missing = [...shown.values()].map((e) => e.path).filter((path) => !ranByTry.has(path) && !ranHere.includes(path));
    if (missing.length) fail('no fresh-project run for ' + missing.join(', ') + ': add a <!-- try: … --> block after it');
    if (tries[0]?.argument) fail('the first try block must set the folder up (<!-- try --> with no examples)');
    for (const url of [README_SANDBOX, README_BACKEND])
      if (!readme.includes(url)) fail(`the README no longer mentions ${url}: update README_SANDBOX / README_BACKEND here`);
    return `${ranByTry.size} by try blocks, ${ranHere.length} here`;
  });

  // The README's folder: every try block in order, then what a reader does with the result.
  const folder = join(tmp, 'try');
  mkdirSync(folder);
  const sh = shell(folder, tgz);
  const savedFile = join(tmp, 'saved-logistics.ndjson');
  // The stand-in your-app.ts appends what saveLogistics got here (the server runs in its own process).
  sh.serverEnv.EXAMPLES_SAVED_FILE = savedFile;
  for (const block of tries) {
    const names = (block.argument ?? '').split(/\s+/).filter(Boolean);
    await check(
      `README.md:${block.line} \`try${names.length ? ': ' + names.map((n) => basename(n)).join(', ') : ''}\`: ${block.code.trim().split('\n').length} line(s) as written`,
      async () => {
        // The README asks the reader trying the page to set baseUrl to the sandbox's URL.
        writeExamples(folder, names, (name, code) =>
          name.startsWith('browser-') ? code.replaceAll('https://channel.example.com', sh.real(README_SANDBOX)) : code,
        );
        for (const text of block.code.split('\n')) await sh.line(text);
        const pkg = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
        return Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })
          .map(([name, spec]) => (name === 'channel-sdk' ? 'channel-sdk (.tgz)' : `${name}@${spec}`))
          .join(', ');
      },
    );
  }
  const sandboxUrl = sh.urls.get(README_SANDBOX);
  const backendUrl = sh.urls.get(README_BACKEND);
  /** The checks below need what the try blocks started. */
  const running = () => {
    if (!sandboxUrl || !backendUrl)
      fail(
        `nothing to check: the try blocks must start the sandbox (\`npx channel-sandbox start … &\`) and the backend (\`npx tsx server.ts &\`); running: ${[...sh.urls.values()].join(', ') || 'neither'}`,
      );
  };
  const cli = async (...args) => JSON.parse(await run('npx', ['--no', 'channel-sandbox', ...args, '--sandbox', sandboxUrl, '--json'], { cwd: folder }));

  await check("the backend's token route: a page's session cookie, a mini-program's x-session; 401 without", async () => {
    running();
    const status = (headers) =>
      fetch(backendUrl + '/channel-token', { headers }).then(async (r) => [r.status, r.status === 200 ? typeof (await r.json()).access_token : await r.text()]);
    expectEqual(await status({ cookie: 'session=demo-session' }), [200, 'string'], 'cookie');
    expectEqual(await status({ 'x-session': 'demo-session' }), [200, 'string'], 'x-session');
    expectEqual((await status({}))[0], 401, 'nobody signed in');
  });

  await check("the backend's webhook: `channel-sandbox push --to` it → 200, saveLogistics got the push", async () => {
    running();
    const result = await cli('push', '--order', 'SO20240601001', '--to', backendUrl + '/webhooks/channel');
    expectEqual([result.ok, result.status], [true, 200], 'push');
    const saved = readFileSync(savedFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).order_no);
    expectEqual(saved, ['SO20240601001'], 'saved');
  });

  await check('the web page in Chromium: opened on the backend, signed in; the quick start lists and creates orders', async () => {
    running();
    const profile = mkdtempSync(join(tmp, 'chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      // The reader's login: the stand-in your-app.ts knows the session "demo-session".
      await context.addCookies([{ name: 'session', value: 'demo-session', url: backendUrl }]);
      const page = context.pages()[0] ?? (await context.newPage());
      const lines = [];
      page.on('console', (message) => {
        // A page without a favicon: Chromium logs the 404; nothing to do with the example.
        if (!message.location().url.endsWith('/favicon.ico')) lines.push(`${message.type()}: ${message.text()}`);
      });
      page.on('pageerror', (error) => lines.push('pageerror: ' + error.message));
      await page.goto(backendUrl + '/');
      for (let i = 0; i < 300 && !lines.some((line) => /^(log|warning|error|pageerror)/.test(line)); i++) await page.waitForTimeout(100);
      if (!(lines.length === 1 && /^log: \d+ orders; created SO\d+$/.test(lines[0]))) fail('the page logged ' + JSON.stringify(lines));
      return lines[0];
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });

  await check('the Node quick start as a .mts file in a default CommonJS project (`npm init -y`), as the README says', async () => {
    const dir = join(tmp, 'commonjs');
    mkdirSync(dir);
    await run('npm', ['init', '-y'], { cwd: dir });
    await run('npm', ['install', '--no-audit', '--no-fund', tgz, `zod@${pins.zod}`, `tsx@${pins.tsx}`], { cwd: dir });
    writeFileSync(join(dir, 'node-client.mts'), shown.get('node-client.ts').code);
    const stdout = await run('npx', ['--no', 'tsx', 'node-client.mts'], { cwd: dir, env: sh.env });
    expectEqual(stdout.trim(), 'SO20240601001 in_transit', 'printed');
    return `package.json type: ${JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).type ?? '(none)'}`;
  });

  await check(
    'examples/redis-token-cache.ts, imported by two processes of your backend: one token call, the token shared through a real redis-server',
    async () => {
      running();
      const redis = await startRedis();
      try {
        writeExamples(folder, ['examples/redis-token-cache.ts']);
        await run('npm', ['install', '--no-audit', '--no-fund', `ioredis@${pins.ioredis}`], { cwd: folder });
        writeFileSync(
          join(folder, 'redis-instance.ts'),
          "import { exchange, redis } from './redis-token-cache.js';\n" +
            "const { accessToken } = await exchange.getToken('user-1');\n" +
            "console.log(JSON.stringify({ accessToken, keys: await redis.keys('myapp:channel:*') }));\n" +
            'await redis.quit();\n',
        );
        const before = await cli('stats');
        const instance = async () =>
          JSON.parse(
            (await run('npx', ['--no', 'tsx', 'redis-instance.ts'], { cwd: folder, env: { ...sh.env, REDIS_URL: redis.url } })).trim().split('\n').at(-1),
          );
        const [first, second] = [await instance(), await instance()];
        const after = await cli('stats');
        expectEqual(second.accessToken, first.accessToken, "the second instance got the first one's token");
        if (!first.keys.some((key) => !key.includes(':lock:'))) fail('no token under myapp:channel: in Redis: ' + first.keys.join(', '));
        expectEqual(after.tokenCalls - before.tokenCalls, 1, 'token calls to the sandbox');
        return `keys: ${first.keys.join(', ')}`;
      } finally {
        await redis.stop();
      }
    },
  );

  await check(
    "the mini-program page: `npm install` in a fresh project, WeChat's npm build, the page against the backend; a relaunch asks the token route nothing",
    async () => {
      running();
      const dir = join(tmp, 'miniprogram');
      mkdirSync(join(dir, 'pages/orders'), { recursive: true });
      await run('npm', ['init', '-y'], { cwd: dir });
      await run('npm', ['install', '--no-audit', '--no-fund', tgz], { cwd: dir });
      // The README: baseUrl the sandbox's URL, the token route your backend's. Your app: its login.
      const page = shown
        .get('miniprogram-page.js')
        .code.replaceAll('https://channel.example.com', sandboxUrl)
        .replaceAll('https://partner.example.com', backendUrl);
      writeFileSync(join(dir, 'pages/orders/orders.js'), page);
      writeFileSync(join(dir, 'app.js'), "App({ globalData: { session: 'demo-session', userId: 'user-1' } });\n");
      writeFileSync(join(dir, 'app.json'), JSON.stringify({ pages: ['pages/orders/orders'] }));
      writeFileSync(
        join(dir, 'project.config.json'),
        JSON.stringify({ appid: 'touristappid', compileType: 'miniprogram', miniprogramRoot: './', setting: { es6: true, urlCheck: false } }),
      );
      const packNpm = await packNpmTool();
      const { warnings } = JSON.parse((await run(process.execPath, [packNpm, dir, join(tmp, 'private.key')], { cwd: dir })).trim().split('\n').at(-1));
      if (warnings.length) fail('packNpm warnings: ' + JSON.stringify(warnings));
      const hosts = join(tmp, 'hosts.mjs');
      await build({ entryPoints: [join(root, 'test/helpers/hosts.ts')], bundle: true, outfile: hosts, format: 'esm', platform: 'node', logLevel: 'silent' });
      const { createHost } = await import(pathToFileURL(hosts).href);
      const storage = new Map();
      const tokenRoute = (wx) => wx.calls.filter((call) => call.url.startsWith(backendUrl)).length;
      const first = launch(dir, createHost, storage, [sandboxUrl, backendUrl]);
      await first.settled;
      expectEqual(Object.keys(first.page.data), ['orders', 'error'], 'page data');
      if (!first.page.data.orders.some((order) => order.order_no === 'SO20240601001')) fail('orders shown: ' + JSON.stringify(first.page.data));
      expectEqual(tokenRoute(first.wx), 1, 'token route calls, first launch');
      const second = launch(dir, createHost, storage, [sandboxUrl, backendUrl]);
      await second.settled;
      expectEqual(
        [second.page.data.orders.length, second.page.data.error, tokenRoute(second.wx)],
        [first.page.data.orders.length, '', 0],
        'relaunch: orders, error, token route calls',
      );
      second.page.onUnload();
      return `${first.page.data.orders.length} orders shown; host calls: ${first.wx.calls.length}, then ${second.wx.calls.length}`;
    },
  );

  await check(
    'the files page: the same project and WeChat npm build, a photo up and an invoice down after `channel-sandbox expire`: one 401 each way, one forced refresh, the file sent again',
    async () => {
      running();
      const dir = join(tmp, 'miniprogram');
      if (!existsSync(join(dir, 'miniprogram_npm'))) fail('the mini-program page check did not build the project');
      // The service's file endpoints are not published: a stand-in that takes a token the sandbox
      // takes (it asks the sandbox with it) and answers the example's two paths.
      const photoBytes = Buffer.from(Array.from({ length: 150_000 }, (_, i) => (i * 31) & 255));
      const invoiceBytes = Buffer.from('%PDF-1.4 invoice SO20240601001\n'.repeat(200));
      const hits = [];
      const files = createServer(async (req, res) => {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        const accepted =
          (await fetch(sandboxUrl + '/open/api/v1/sdk/orders', { headers: { authorization: String(req.headers.authorization) } })).status === 200;
        hits.push(`${req.method} ${req.url} ${accepted ? 200 : 401}`);
        const json = (status, body) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        if (!accepted) return json(401, { code: 401, message: 'token expired' });
        if (req.method === 'POST' && req.url === '/open/api/v1/sdk/photos') {
          const form = await new Response(Buffer.concat(chunks), { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
          const file = form.get('file');
          const same = file && Buffer.from(await file.arrayBuffer()).equals(photoBytes);
          return json(200, {
            code: 0,
            data: { url: same ? 'https://cdn.example/photo-ok' : 'https://cdn.example/photo-corrupt', order: form.get('order_no') },
          });
        }
        if (req.url === '/open/api/v1/sdk/invoices/SO20240601001') return res.writeHead(200, { 'content-type': 'application/pdf' }).end(invoiceBytes);
        json(404, { code: 404, message: 'no such path' });
      });
      await new Promise((ok) => files.listen(0, '127.0.0.1', ok));
      const filesUrl = 'http://127.0.0.1:' + files.address().port;
      try {
        const code = shown
          .get('miniprogram-files.js')
          .code.replaceAll('https://channel.example.com', filesUrl)
          .replaceAll('https://partner.example.com', backendUrl);
        mkdirSync(join(dir, 'pages/photo'), { recursive: true });
        writeFileSync(join(dir, 'pages/photo/photo.js'), code);
        const chosen = join(tmp, 'photo.jpg');
        writeFileSync(chosen, photoBytes);
        const hosts = join(tmp, 'hosts.mjs');
        const { createHost } = await import(pathToFileURL(hosts).href);
        const launched = launch(dir, createHost, new Map(), [filesUrl, backendUrl], 'pages/photo/photo', (wx) => {
          wx.chooseMedia = (o) => setTimeout(() => o.success({ tempFiles: [{ tempFilePath: chosen }] }), 1);
        });
        const done = (patch) => 'invoice' in patch || 'error' in patch;
        // Once with a fresh token, then the sandbox ends it: the next upload meets a 401, as after 15 minutes.
        let finished = launched.until(done);
        launched.page.onChoose();
        await finished;
        await cli('expire');
        finished = launched.until(done);
        launched.page.onChoose();
        await finished;
        const { data } = launched.page;
        if (data.error) fail('the page shows an error: ' + data.error);
        expectEqual(data.photo, 'https://cdn.example/photo-ok', 'the photo the stand-in received (bytes intact)');
        if (!readFileSync(String(data.invoice)).equals(invoiceBytes)) fail('the invoice file is not the bytes served');
        const uploads = hits.filter((hit) => hit.startsWith('POST'));
        expectEqual(
          uploads,
          ['POST /open/api/v1/sdk/photos 200', 'POST /open/api/v1/sdk/photos 401', 'POST /open/api/v1/sdk/photos 200'],
          'uploads (fresh token; after expire: the expired one, then the refreshed one)',
        );
        const forced = launched.wx.calls.filter((call) => call.url.startsWith(backendUrl + '/channel-token?force=1')).length;
        expectEqual(forced, 1, 'forced token-route calls');
        return `${hits.join(', ')}; progress ${data.percent}%`;
      } finally {
        await new Promise((ok) => files.close(ok));
      }
    },
  );
} catch (error) {
  rows.push({ what: 'stage set-up', ok: false, note: error.message, seconds: 0 });
} finally {
  await stopAll();
  if (!process.env.KEEP_TMP) rmSync(tmp, { recursive: true, force: true });
}

/** A node script running miniprogram-ci's packNpm (WeChat's "Tools > Build npm") on a project. */
async function packNpmTool() {
  // The consumers stage's pinned copy when installed; else the same version, installed once here.
  const version = JSON.parse(readFileSync(join(root, 'test/consumers/package.json'), 'utf8')).devDependencies['miniprogram-ci'];
  let ci = join(root, 'test/consumers/node_modules/miniprogram-ci');
  if (!existsSync(ci)) {
    const tools = join(tmp, 'tools');
    mkdirSync(tools);
    await run('npm', ['install', '--no-audit', '--no-fund', '--no-save', `miniprogram-ci@${version}`], { cwd: tools, timeout: 900_000 });
    ci = join(tools, 'node_modules/miniprogram-ci');
  }
  const { generateKeyPairSync } = await import('node:crypto');
  // packNpm wants an appid and a signing key (used by upload/preview, not by the npm build): a throwaway one.
  writeFileSync(join(tmp, 'private.key'), generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }));
  const script = join(tmp, 'pack-npm.cjs');
  writeFileSync(
    script,
    `const ci = require(${JSON.stringify(ci)});
const [dir, key] = process.argv.slice(2);
const project = new ci.Project({ appid: 'touristappid', type: 'miniProgram', projectPath: dir, privateKeyPath: key, ignores: ['node_modules/**/*'] });
ci.packNpm(project, { reporter: () => {} }).then((warnings) => console.log(JSON.stringify({ warnings })));\n`,
  );
  return script;
}

/**
 * Launches the built mini-program as WeChat would: app.js, then the page, each a CommonJS
 * module whose `require` resolves relative paths and packages from miniprogram_npm/; `wx` is
 * the emulated host (real HTTP, domain allow-list) with storage kept across launches.
 */
function launch(dir, createHost, storage, allowedOrigins, pagePath = 'pages/orders/orders', extend = () => {}) {
  const wx = Object.assign(createHost('wx', { allowedOrigins }), {
    getStorageSync: (key) => (storage.has(key) ? storage.get(key) : ''),
    setStorageSync: (key, value) => void storage.set(key, JSON.parse(JSON.stringify(value))),
    removeStorageSync: (key) => void storage.delete(key),
  });
  extend(wx);
  let app;
  let definition;
  const context = vm.createContext({
    wx,
    App: (options) => void (app = options),
    getApp: () => app,
    Page: (options) => void (definition = options),
    setTimeout,
    clearTimeout,
    console,
  });
  const cache = new Map();
  const load = (file) => {
    if (cache.has(file)) return cache.get(file).exports;
    const module = { exports: {} };
    cache.set(file, module);
    vm.runInContext(`(function (require, module, exports) {${readFileSync(file, 'utf8')}\n})`, context, { filename: file })(
      (id) => {
        if (id.startsWith('.')) return load(resolve(dirname(file), id.endsWith('.js') ? id : id + '.js'));
        const base = join(dir, 'miniprogram_npm', id); // WeChat: pkg/index.js, or pkg/sub as sub.js then sub/index.js
        return load(id.includes('/') && existsSync(base + '.js') ? base + '.js' : join(base, 'index.js'));
      },
      module,
      module.exports,
    );
    return module.exports;
  };
  load(join(dir, 'app.js'));
  load(join(dir, pagePath + '.js'));
  let done;
  const settled = new Promise((resolvePromise, reject) => {
    done = resolvePromise;
    setTimeout(() => reject(new Error('the page showed nothing within 30 s')), 30_000).unref();
  });
  const page = Object.assign(Object.create(null), definition, {
    data: JSON.parse(JSON.stringify(definition.data || {})),
    setData(patch) {
      Object.assign(page.data, patch);
      patches.push(patch);
      for (const waiter of waiters.splice(0)) waiter();
      done();
    },
  });
  const patches = [];
  const waiters = [];
  /** Resolves at the first setData patch from now on that `test` accepts (30 s at most). */
  const until = (test) => {
    const from = patches.length;
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(
        () => reject(new Error('the page showed nothing matching within 30 s; it showed ' + JSON.stringify(patches.slice(from)))),
        30_000,
      );
      const look = () => (patches.slice(from).some(test) ? (clearTimeout(timer), resolvePromise()) : waiters.push(look));
      look();
    });
  };
  if (page.onLoad) page.onLoad();
  return { wx, page, settled, until };
}

const cell = (text) => String(text).replaceAll('|', '\\|').replaceAll('\n', '<br>');
process.stdout.write(
  '| check | result | s | notes |\n|---|---|---|---|\n' +
    rows.map((row) => `| ${cell(row.what)} | ${row.ok ? 'ok' : '**FAILED**'} | ${row.seconds.toFixed(1)} | ${cell(row.note)} |\n`).join(''),
);
process.stdout.write(
  `\n${rows.filter((r) => r.ok).length} of ${rows.length} checks passed in ${((performance.now() - started) / 1000).toFixed(0)} s` +
    (process.env.KEEP_TMP ? ` (projects kept in ${tmp})` : '') +
    '\n',
);
process.exit(rows.some((row) => !row.ok) ? 1 : 0);
