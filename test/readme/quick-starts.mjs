// The quick starts of docs/guide/quick-starts.md (issue #35), as `npm run test:examples` runs them:
// every try block of the guide in order, each from the same parent folder as a new terminal
// would start (its own variables), with the shell of test/readme/reader-shell.mjs; then what the
// guide leaves to the reader's own tools. The uni-app and Taro projects are made as the guide
// makes them (uni-app's files written, Taro's `init` run, each installed from the registry), and
// their builds run in the WeChat-like realm
// of test/consumers/mp-runtime.mjs over the host emulation (real HTTP); the native WeChat project
// goes through miniprogram-ci's packNpm and the realm fresh-projects.mjs launches pages in.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { captureConsole, createWx, FRAMEWORKS, loadHostEmulator, waitFor } from '../consumers/miniprogram-frameworks.mjs';
import { launch as launchBuilt } from '../consumers/mp-runtime.mjs';
import { createShell, expectEqual, fail, openChromium } from './reader-shell.mjs';

const GUIDE = 'docs/guide/quick-starts.md';
/** The guide's addresses: the sandbox, the Express backend, the Vite dev server, `next start`. */
const SANDBOX = 'http://127.0.0.1:8787';
const BACKEND = 'http://127.0.0.1:3000';
const VITE = 'http://localhost:5173';
const NEXT = 'http://localhost:3001';
/** The folders the guide creates, next to each other. */
const FOLDERS = { backend: 'channel-backend', vite: 'my-vite-app', next: 'my-next-app', uniapp: 'my-uni-app', taro: 'my-taro-app', wechat: 'my-wechat-app' };

export async function quickStarts({ root, tmp, tgz, pins, shown, tries, runner, check, packNpmTool, launch }) {
  const guide = readFileSync(join(root, GUIDE), 'utf8');
  const blocks = tries.filter((block) => block.document === GUIDE);
  const base = join(tmp, 'quick-starts');
  mkdirSync(base);
  // Taro's init runs as the guide writes it, its flags answering every question: the default
  // React template on webpack 5, its @tarojs packages at the version the guide names.
  const taroInit = /npx --yes @tarojs\/cli@(\S+) init /.exec(guide);
  if (!taroInit) fail(`${GUIDE} no longer starts Taro with \`npx --yes @tarojs/cli@<version> init\`: update test/readme/quick-starts.mjs`);
  const taroVersion = taroInit[1];
  const scaffolds = {
    [`--yes @tarojs/cli@${taroVersion} init`](folder) {
      const made = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
      expectEqual(made.templateInfo, { name: 'default', typescript: false, css: 'None', framework: 'React' }, "Taro init's template");
      expectEqual(made.dependencies['@tarojs/taro'], taroVersion, "the template's @tarojs/taro");
      const config = readFileSync(join(folder, 'config/index.js'), 'utf8');
      if (!/compiler: 'webpack5'/.test(config) || !existsSync(join(folder, 'src/pages/index/index.jsx')))
        fail('taro init did not make the React + webpack 5 project: ' + config.slice(0, 300));
    },
  };
  const sh = createShell({ runner, tgz, pins, shown, scaffolds });
  const folder = (name) => join(base, FOLDERS[name]);

  await check(`${GUIDE}: its addresses and folders are the ones this stage checks`, async () => {
    const missing = [SANDBOX, BACKEND, VITE, NEXT, ...Object.values(FOLDERS)].filter((said) => !guide.includes(said));
    if (missing.length) fail(`the guide no longer mentions ${missing.join(', ')}: update test/readme/quick-starts.mjs`);
    return `${blocks.length} try blocks`;
  });
  for (const block of blocks) {
    const names = (block.argument ?? '').split(/\s+/).filter(Boolean);
    await check(
      `${GUIDE}:${block.line} \`try${names.length ? ': ' + names.map((n) => basename(n.split('=')[1] ?? n)).join(', ') : ''}\`: ${block.code.trim().split('\n').length} line(s) as written`,
      async () => {
        for (const key of Object.keys(sh.env)) delete sh.env[key]; // a new terminal
        const dir = await sh.block(block, base);
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
        return (
          `in ${basename(dir)}: ` +
          Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })
            .map(([name, spec]) => `${name}@${spec}`)
            .join(', ')
        );
      },
    );
  }
  const sandboxUrl = sh.urls.get(SANDBOX);
  const backendUrl = sh.urls.get(BACKEND);
  if (!sandboxUrl || !backendUrl) return void (await check('the quick starts', () => fail('the guide did not start the sandbox and the backend')));
  // A reader runs `channel-sandbox expire` by hand; here the quick starts expire tokens seconds
  // apart, well within the 5 s in which the backend's exchange shares a forced refresh
  // (createTokenExchange's forceRefreshWindow): every provider passes `rejected` on, so the token
  // route never hands back the token a 401 just rejected (issue #46 item 1).
  const expire = () => runner.run('npx', ['channel-sandbox', 'expire', '--sandbox', sandboxUrl], { cwd: folder('backend'), env: { npm_config_yes: 'false' } });

  for (const [name, said, stack] of [
    ['vite', VITE, 'Vite (dev server, through its proxy)'],
    ['next', NEXT, 'Next.js (next start)'],
  ]) {
    await check(
      `${stack}: the page in Chromium: the 401 message before signing in; the orders after the session cookie; after \`channel-sandbox expire\` one /channel-token?force=1 and the orders again`,
      async () => {
        const url = sh.urls.get(said);
        if (!url) fail(`the guide's ${name} block started nothing at ${said}`);
        return webPage(url + '/', { tmp, expire });
      },
    );
  }

  const emulator = await loadHostEmulator();
  for (const framework of FRAMEWORKS) {
    const dir = folder(framework.id);
    await check(
      `${framework.tool}: the versions the guide installs; the real build run in a WeChat-like realm: the orders, then after \`channel-sandbox expire\` a relaunch shows them after one forced refresh`,
      async () => {
        if (!existsSync(join(dir, framework.output, 'app.js'))) fail(`no build in ${framework.output}: did the guide's block build it?`);
        // The versions the guide installs: Taro's those its init names, uni-app's the consumers stage's.
        for (const [name, version] of Object.entries(
          framework.id === 'taro' ? { '@tarojs/cli': taroVersion, '@tarojs/taro': taroVersion } : consumersVersions(root, framework),
        )) {
          const installed = JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')).version;
          expectEqual(installed, version, name + ' installed');
        }
        const storage = new Map();
        const open = async () => {
          const logs = [];
          const host = emulator.createHost('wx');
          const app = launchBuilt(join(dir, framework.output), { wx: createWx(host, storage).wx, console: captureConsole(logs) });
          const page = app.openPage(app.pages[0]);
          const listed = await waitFor(() => JSON.stringify(page.data).includes('SO20240602002'), 20_000);
          if (!listed || app.errors.length)
            fail(`the page showed ${JSON.stringify(page.data).slice(0, 300)}; errors: ${app.errors.join('; ')}; console: ${logs.slice(-5).join(' | ')}`);
          return host.calls;
        };
        return relaunchAfterExpiry(open, backendUrl, expire);
      },
    );
  }

  await check(
    "native WeChat: WeChat's npm build of my-wechat-app (packNpm), the page in the WeChat-like realm: the orders, then after `channel-sandbox expire` a relaunch shows them after one forced refresh",
    async () => {
      const dir = folder('wechat');
      const packNpm = await packNpmTool();
      const { warnings } = JSON.parse((await runner.run(process.execPath, [packNpm, dir, join(tmp, 'private.key')], { cwd: dir })).trim().split('\n').at(-1));
      if (warnings.length) fail('packNpm warnings: ' + JSON.stringify(warnings));
      const storage = new Map();
      const open = async () => {
        const launched = launch(dir, emulator.createHost, storage, [sandboxUrl, backendUrl], 'pages/orders/orders');
        await launched.settled;
        const { data } = launched.page;
        if (data.error || !data.orders.some((order) => order.order_no === 'SO20240601001')) fail('the page shows ' + JSON.stringify(data));
        return launched.wx.calls;
      };
      return relaunchAfterExpiry(open, backendUrl, expire);
    },
  );
}

/**
 * Opens a mini-program twice on the same storage (`open` resolves to the host calls of its
 * launch), `channel-sandbox expire` in between: the first launch asks the token route plainly
 * (and once more, forced, when the Express backend handed back a token an earlier quick start's
 * expiry ended: the quick starts share the sandbox's user, and the Next.js one refreshes through
 * its own token route, so the Express backend's cache still holds the token its expiry ended);
 * the relaunch restores the token it got (hostTokenStore), meets a 401 and asks once, forced, and
 * nothing else.
 */
async function relaunchAfterExpiry(open, backendUrl, expire) {
  // A forced call names the token it replaces (`rejected`): shown here as `rejected=…`.
  const tokenCalls = (calls) =>
    calls
      .filter((call) => call.url.startsWith(backendUrl + '/channel-token'))
      .map((call) => call.url.slice(backendUrl.length).replace(/&rejected=\w+$/, '&rejected=…'));
  const forced = '/channel-token?force=1&rejected=…';
  const first = tokenCalls(await open());
  if (first[0] !== '/channel-token' || first.length > 2 || (first[1] && first[1] !== forced))
    fail('token-route calls of the first launch: ' + JSON.stringify(first));
  await expire();
  expectEqual(tokenCalls(await open()), [forced], 'token-route calls of the relaunch');
  return `token-route calls: ${JSON.stringify(first)}, then one forced`;
}

/**
 * A web quick start's page in Chromium, as the guide tells a reader to try it: the 401 message
 * before signing in, the orders once signed in (the session cookie) and Reload, then after
 * `channel-sandbox expire` Reload again: one forced token call, the orders again.
 */
async function webPage(url, { tmp, expire }) {
  const { context, page, close } = await openChromium(tmp);
  try {
    const origin = new URL(url).origin;
    const tokenCalls = [];
    const errors = [];
    page.on('request', (request) => {
      const at = new URL(request.url());
      if (at.pathname === '/channel-token') tokenCalls.push((at.origin === origin ? '' : at.origin) + at.pathname + at.search);
    });
    page.on('pageerror', (error) => errors.push(error.message));
    const alert = () => page.locator('main [role=alert]').textContent({ timeout: 30_000 });
    /** Presses Reload and waits for the orders the service answered. */
    const reload = async () => {
      const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/open/api/v1/sdk/orders' && r.status() === 200, { timeout: 30_000 });
      await page.getByRole('button', { name: 'Reload' }).click();
      await answered;
      await page.waitForFunction(() => document.querySelectorAll('li').length > 0 && !document.querySelector('main [role=alert]'), undefined, {
        timeout: 30_000,
      });
      return page.$$eval('li', (items) => items.map((li) => li.textContent));
    };
    await page.goto(url);
    const refused = await alert();
    if (!/^TOKEN_PROVIDER_ERROR: .*token route answered HTTP 401: nobody is signed in/.test(refused ?? ''))
      fail('before signing in the page showed ' + JSON.stringify(refused));
    // The guide's sign-in: the stand-in session's cookie, then Reload.
    await context.addCookies([{ name: 'session', value: 'demo-session', url: origin }]);
    const first = await reload();
    // The orders, each with its logistics (the sandbox's first order is on its way with SF).
    if (!first.some((text) => text.startsWith('SO20240601001') && text.includes('SF1234567890 in_transit')))
      fail('signed in, the page listed ' + JSON.stringify(first));
    // Twice, seconds apart: each expiry costs one forced token call, and the page shows the orders again.
    for (const round of [1, 2]) {
      const before = tokenCalls.length;
      await expire();
      const again = await reload();
      const forced = tokenCalls.slice(before);
      if (forced.length !== 1 || !/^\/channel-token\?force=1&rejected=\w+$/.test(forced[0]))
        fail(`token calls after expire #${round}: ${JSON.stringify(forced)} (one /channel-token?force=1&rejected=… expected)`);
      expectEqual([again, errors], [first, []], `the orders again after expire #${round}, no page error`);
    }
    return `${first.join(', ')}; token calls ${JSON.stringify(tokenCalls)}`;
  } finally {
    await close();
  }
}

/** The versions of `framework.versions` the consumers stage pins (test/consumers/<id>/package.json). */
function consumersVersions(root, framework) {
  const { dependencies, devDependencies } = JSON.parse(readFileSync(join(root, 'test/consumers', framework.id, 'package.json'), 'utf8'));
  return Object.fromEntries(framework.versions.map((name) => [name, { ...dependencies, ...devDependencies }[name]]));
}
