// `npm run test:examples` (issue #23): every example of the README, run in fresh projects
// exactly the way the README tells a reader to, from the packed tarball; then the quick starts of
// docs/guide/quick-starts.md (issue #35, test/readme/quick-starts.mjs).
//
// The `<!-- try -->` sh blocks are the instructions; this script reads and runs them line by line
// in a new folder (the first block sets the folder up, as the README says): each file an example
// block shows is written there as shown, `npm install <names>` installs the packed .tgz for
// channel-sdk and each other package at a pinned version, `export` sets the variables, a command
// ending in `&` keeps running in the background, and a `# prints: …` comment is what the command
// must print. What a test cannot do as written: test/readme/reader-shell.mjs.
// Then what the README leaves to the reader's own tools: the web page opened in Chromium,
// signed in; the mini-program page through WeChat's npm build (miniprogram-ci packNpm) in a
// WeChat-like realm whose `wx.request` is real HTTP (test/helpers/hosts.ts); the Redis token
// cache imported by two processes of "your backend" against a real redis-server.
// Prints one table; exits 1 if any check failed. KEEP_TMP=1 keeps the projects; TARBALL=path
// checks that tarball instead of packing; ONLY=readme or ONLY=quick-starts runs one part.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';
import { startRedis } from '../helpers/redis-server.mjs';
import { quickStarts } from './quick-starts.mjs';
import { createRunner, createShell, documentBlocks, expectEqual, fail, KEYWORDS, openChromium } from './reader-shell.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const started = performance.now();
const tmp = mkdtempSync(join(tmpdir(), 'channel-sdk-examples-'));
const readme = readFileSync(join(root, 'README.md'), 'utf8');
/** The README and every guide: their example blocks by the file each shows (what a reader copies), and their try blocks. */
const documents = ['README.md', ...readdirSync(join(root, 'docs/guide')).map((name) => 'docs/guide/' + name)];
const { shown, tries: allTries } = documentBlocks(root, documents, (file) => readFileSync(file, 'utf8'));
const keyword = (block) => KEYWORDS.find((word) => (block.argument ?? '').split(/\s+/).includes(word));
/** The README's walkthrough: its try blocks but the references and the clone's. */
const tries = allTries.filter((block) => block.document === 'README.md' && !keyword(block));
/** The command references of the README and the guides (not the quick starts'), run after the README's checks in its folder. */
const references = allTries.filter((block) => keyword(block) === 'reference');
/** What a reader runs in a clone of this repository. */
const cloneTries = allTries.filter((block) => keyword(block) === 'clone');
const readmeShown = [...shown.values()].filter((example) => example.document === 'README.md');

// The versions a reader gets today, pinned: the repository's own devDependencies where it has
// them (express, zod, ioredis, esbuild, next, react, vite's), the consumers stage's (jest), else here.
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const consumerTools = JSON.parse(readFileSync(join(root, 'test/consumers/package.json'), 'utf8')).devDependencies;
const pins = {
  ...rootPackage.devDependencies,
  tsx: '4.23.15',
  jest: consumerTools.jest,
  vite: '8.3.8',
  '@vitejs/plugin-react': '6.3.0',
  '@types/react-dom': '19.3.0',
};
// The README's addresses for the two servers a reader starts (the sandbox's default port, PORT's default in server.ts).
const README_SANDBOX = 'http://127.0.0.1:8787';
const README_BACKEND = 'http://127.0.0.1:3000';
const userEnv = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))), NEXT_TELEMETRY_DISABLED: '1' };
const runner = createRunner({ base: tmp, userEnv });
const { run } = runner;

/** ONLY=readme, ONLY=quick-starts or ONLY=clone: one part of the stage. */
const part = (name) => !process.env.ONLY || process.env.ONLY === name;
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

  // Every example the documents show is run, by a try block or by a check of its own here.
  const ranByTry = new Set(
    allTries.flatMap((b) =>
      (b.argument ?? '')
        .split(/\s+/)
        .filter(Boolean)
        .map((name) => name.split('=')[0]),
    ),
  );
  const ranHere = ['examples/miniprogram-page.js', 'examples/miniprogram-files.js', 'examples/redis-token-cache.ts'];
  // (webhooks.md's framework recipes run with their frameworks: test/server, test/frameworks.)
  const tried = ['README.md', 'docs/guide/quick-starts.md', 'docs/guide/testing.md'];
  await check(
    'every example the README and the guides with try blocks show is run in a fresh project (a `try` block, or a check of its own here)',
    async () => {
      const missing = [...shown.values()]
        .filter((e) => tried.includes(e.document))
        .map((e) => e.path)
        .filter((path) => !ranByTry.has(path) && !ranHere.includes(path));
      if (missing.length) fail('no fresh-project run for ' + missing.join(', ') + ': add a <!-- try: … --> block after it');
      if (tries[0]?.argument) fail('the first try block must set the folder up (<!-- try --> with no examples)');
      for (const url of [README_SANDBOX, README_BACKEND])
        if (!readme.includes(url)) fail(`the README no longer mentions ${url}: update README_SANDBOX / README_BACKEND here`);
      return `${ranByTry.size} by try blocks, ${ranHere.length} here; README: ${readmeShown.length} examples`;
    },
  );
  if (part('readme')) await readmeChecks(tgz);
  if (part('clone')) await cloneChecks();
  if (part('quick-starts')) await quickStarts({ root, tmp, tgz, pins, shown, tries: allTries, runner, check, packNpmTool, launch });
} catch (error) {
  rows.push({ what: 'stage set-up', ok: false, note: error.message, seconds: 0 });
} finally {
  await runner.stopAll();
  for (const redis of startedRedis.all ?? []) await redis.stop();
  if (!process.env.KEEP_TMP) rmSync(tmp, { recursive: true, force: true });
}

/** The README's try blocks in one folder, as a reader runs them, then what a reader does with the result. */
async function readmeChecks(tgz) {
  const folder = join(tmp, 'try');
  mkdirSync(folder);
  // Every file as shown: the page's service URL comes from its build command (esbuild --define).
  const sh = createShell({ runner, tgz, pins, shown, redis: startedRedis });
  const savedFile = join(tmp, 'saved-logistics.ndjson');
  // The stand-in your-app.ts appends what saveLogistics got here (the server runs in its own process).
  sh.serverEnv.EXAMPLES_SAVED_FILE = savedFile;
  for (const block of tries) {
    const names = (block.argument ?? '').split(/\s+/).filter(Boolean);
    await check(
      `README.md:${block.line} \`try${names.length ? ': ' + names.map((n) => basename(n)).join(', ') : ''}\`: ${block.code.trim().split('\n').length} line(s) as written`,
      async () => {
        await sh.block(block, folder);
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
    const { context, page, close } = await openChromium(tmp);
    try {
      // The reader's login: the stand-in your-app.ts knows the session "demo-session".
      await context.addCookies([{ name: 'session', value: 'demo-session', url: backendUrl }]);
      const lines = [];
      page.on('console', (message) => {
        // A page without a favicon: Chromium logs the 404; nothing to do with the example.
        if (!message.location().url.endsWith('/favicon.ico')) lines.push(`${message.type()}: ${message.text()}`);
      });
      page.on('pageerror', (error) => lines.push('pageerror: ' + error.message));
      await page.goto(backendUrl + '/');
      for (let i = 0; i < 300 && !lines.some((line) => /^(log|warning|error|pageerror)/.test(line)); i++) await page.waitForTimeout(100);
      if (!(lines.length === 1 && /^log: \d+ orders; SO20240601001 in_transit ; created SO\d+$/.test(lines[0])))
        fail('the page logged ' + JSON.stringify(lines));
      return lines[0];
    } finally {
      await close();
    }
  });

  await check('the Node quick start as a .mts file in a default CommonJS project (`npm init -y`), as the README says', async () => {
    const dir = join(tmp, 'commonjs');
    mkdirSync(dir);
    await run('npm', ['init', '-y'], { cwd: dir });
    await run('npm', ['install', '--no-audit', '--no-fund', tgz, `zod@${pins.zod}`, `tsx@${pins.tsx}`], { cwd: dir });
    writeFileSync(join(dir, 'node-client.mts'), shown.get('examples/node-client.ts').code);
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
        await sh.block({ argument: 'examples/redis-token-cache.ts', code: '' }, folder);
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
        .get('examples/miniprogram-page.js')
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
    "the files page against the sandbox's own file routes: the same project and WeChat npm build, a photo up and an invoice down, then after `channel-sandbox expire` one 401, one forced refresh, the photo sent again, its bytes intact",
    async () => {
      running();
      const dir = join(tmp, 'miniprogram');
      if (!existsSync(join(dir, 'miniprogram_npm'))) fail('the mini-program page check did not build the project');
      const photoBytes = Buffer.from(Array.from({ length: 150_000 }, (_, i) => (i * 31) & 255));
      // The README: baseUrl the sandbox's URL, the token route your backend's.
      const code = shown
        .get('examples/miniprogram-files.js')
        .code.replaceAll('https://channel.example.com', sandboxUrl)
        .replaceAll('https://partner.example.com', backendUrl);
      mkdirSync(join(dir, 'pages/photo'), { recursive: true });
      writeFileSync(join(dir, 'pages/photo/photo.js'), code);
      const chosen = join(tmp, 'photo.jpg');
      writeFileSync(chosen, photoBytes);
      const hosts = join(tmp, 'hosts.mjs');
      const { createHost } = await import(pathToFileURL(hosts).href);
      const launched = launch(dir, createHost, new Map(), [sandboxUrl, backendUrl], 'pages/photo/photo', (wx) => {
        wx.chooseMedia = (o) => setTimeout(() => o.success({ tempFiles: [{ tempFilePath: chosen }] }), 1);
      });
      const done = (patch) => 'invoice' in patch || 'error' in patch;
      const before = await cli('stats');
      // Once with a fresh token, then the sandbox ends it: the next upload meets a 401, as after 15 minutes.
      let finished = launched.until(done);
      launched.page.onChoose();
      await finished;
      await cli('expire');
      finished = launched.until(done);
      launched.page.onChoose();
      await finished;
      const after = await cli('stats');
      const { data } = launched.page;
      if (data.error) fail('the page shows an error: ' + data.error);
      // The photo's URL is the sandbox's: what it kept are the bytes the page sent.
      const token = (await run('npx', ['--no', 'channel-sandbox', 'token', 'qa-files', '--sandbox', sandboxUrl], { cwd: folder })).trim();
      const stored = Buffer.from(await (await fetch(String(data.photo), { headers: { authorization: 'Bearer ' + token } })).arrayBuffer());
      if (!stored.equals(photoBytes)) fail(`the photo the sandbox kept (${stored.length} bytes) is not the file sent (${photoBytes.length})`);
      if (!/^%PDF-1\.4\n[\s\S]*%%EOF\n$/.test(readFileSync(String(data.invoice), 'latin1'))) fail('the invoice file is not the PDF the sandbox serves');
      const uploads = launched.wx.uploads.length;
      const forced = launched.wx.calls.filter((call) => call.url.startsWith(backendUrl + '/channel-token?force=1')).length;
      expectEqual(
        [uploads, launched.wx.downloads.length, after.unauthorized - before.unauthorized, forced],
        [3, 2, 1, 1],
        'uploads (fresh; after expire: the expired token, the refreshed one), downloads, 401s, forced token-route calls',
      );
      return `${data.photo}; progress ${data.percent}%`;
    },
  );

  // The command references of the README and the guides, in the same folder: the sandbox and
  // the backend above serve them; a Redis for the inbox commands is started when one names it.
  for (const block of references)
    await check(`${block.document}:${block.line} \`try: reference\`: ${block.code.trim().split('\n').length} line(s) as written`, async () => {
      running();
      await sh.block(block, folder);
    });
}

/** The blocks a reader runs in a clone of this repository (`git clone` of this one's HEAD: commit first). */
async function cloneChecks() {
  const clone = join(tmp, 'clone');
  await run('git', ['clone', '--quiet', root, clone], { cwd: tmp });
  const sh = createShell({ runner, tgz: undefined, pins, shown });
  for (const block of cloneTries)
    await check(`${block.document}:${block.line} \`try: clone\`: ${block.code.trim().split('\n').length} line(s) as written`, async () => {
      await sh.block(block, clone);
      return sh.demos.length ? 'demos at ' + sh.demos.join(', ') : '';
    });
}

/**
 * A redis-server for what the documents' `redis://127.0.0.1:6379` means (`args`: a document's
 * `redis-server` line's); each is kept on the function (hoisted, as packNpmTool's tool) and stopped at the end.
 */
async function startedRedis(args = []) {
  const redis = await startRedis({ args });
  (startedRedis.all ??= []).push(redis);
  return redis.url;
}

/**
 * A node script running miniprogram-ci's packNpm (WeChat's "Tools > Build npm") on a project,
 * made once: the README's mini-program checks and the native WeChat quick start share it.
 */
function packNpmTool() {
  // Kept on the function (hoisted): the checks above run before a module-level `let` would exist.
  packNpmTool.made ??= makePackNpmTool();
  return packNpmTool.made;
}

async function makePackNpmTool() {
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
