// What `npm run test:examples` knows of a reader's shell: it runs the sh lines of the documents'
// `<!-- try -->` blocks as written (test/readme/fresh-projects.mjs for the README,
// test/readme/quick-starts.mjs for docs/guide/quick-starts.md). Only what a test cannot do as
// written changes:
//   - a server started in the background listens on a free port (`channel-sandbox start` gets
//     `--port 0 --json`; another gets the free port in place of the one its `# prints:` address
//     names, in its arguments or as PORT), and that address means the port it got wherever it
//     appears afterwards: in commands, `export`s and the files the block names;
//   - `npx` runs with npm_config_yes=false, so a package the document forgot to install fails
//     instead of downloading (not `npx --no`: after it npm 11 takes the command's own `--port` for
//     its own configuration);
//   - a scaffolding command the caller names (`npx --yes @tarojs/cli@4.1.11 init …`) runs as
//     written before the block's files are written (they go into the folder it makes), and the
//     caller checks what it made;
//   - `npm install <name>` installs the packed .tgz for channel-sdk, else the pinned version
//     (a document's own `name@x.y.z`, prerelease too, is kept as it is);
//   - a command that serves until stopped (`channel-sandbox start`, `listen`, `events`, `curl -N`,
//     `npm run demo`) runs in a terminal of its own, `&` or not; `npm run demo` gets a free PORT
//     unless the line sets one. A `channel-sandbox start` while the documents' sandbox runs is that
//     sandbox (a reader's second one could not take its port): the test checks its webhook URL is
//     the line's. Every `channel-sandbox` command gets CHANNEL_SANDBOX_URL, so that its default
//     address means the port the sandbox got; `redis://127.0.0.1:6379` means a redis-server the
//     shell starts (the caller's `redis`);
//   - the files a block names are written where the reader saves them: when the block's first
//     line enters a folder (`mkdir -p my-vite-app && cd my-vite-app`, `cd my-taro-app`), into
//     that folder before the block runs, as the document says ("the files above in
//     my-vite-app"), so that a plain `mkdir my-vite-app` fails here as it does in sh (File
//     exists: the `&& cd` never runs and the rest lands in the folder above); else before the
//     block's first `npx` (or at its end): what comes before (`npm install`, `echo … > file`)
//     runs without them. `mkdir` without `-p` fails on a folder that exists, as sh's does.
// One thing this shell does that sh does not: it waits for a server started with `&` to be ready
// before the next line. So a block may not run a command after a server it starts in the
// background (raceAfterBackground below): pasted into sh, that command runs while the server is
// still starting (`channel-sandbox push` right after `channel-sandbox start … &`: "no sandbox at
// …, connection refused"). Such a block ends with its servers; what uses them is the next block.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { readmeBlocks } from '../../scripts/readme.mjs';
import { freePort } from '../helpers/redis-server.mjs';

export const fail = (message) => {
  throw new Error(message);
};
export function expectEqual(actual, expected, what) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) fail(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}
const ansi = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g');
const escape = (text) => text.replaceAll(/[.*+?^${}()|[\]\\]/g, '\\$&');
/**
 * What a try block's argument may say besides files: `reference` (a command reference, run after
 * the walkthrough and its checks, in its folder), `clone` (run in a clone of this repository).
 */
export const KEYWORDS = ['reference', 'clone'];
/** The sandbox's default address and a Redis's, which the documents use. */
const SANDBOX = 'http://127.0.0.1:8787';
const REDIS = 'redis://127.0.0.1:6379';
/** A document's address of a server on this machine: `http://127.0.0.1:3000`, `http://localhost:5173`. */
const LOCAL_URL = /(https?:\/\/(?:127\.0\.0\.1|localhost)):(\d+)/;

/** Debian's Chromium with a fresh profile under `tmp` (the reader's browser); close() removes the profile. */
export async function openChromium(tmp) {
  const profile = mkdtempSync(join(tmp, 'chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    context,
    page: context.pages()[0] ?? (await context.newPage()),
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Processes and commands in a reader's environment (no npm_* variables), with their output kept for failures. */
export function createRunner({ base, userEnv }) {
  const background = [];
  /** Runs a command to its end; resolves to its stdout, or rejects with the tail of its output. */
  function run(command, args, { cwd, env = {}, timeout = 300_000 }) {
    return new Promise((resolvePromise, reject) => {
      execFile(command, args, { cwd, env: { ...userEnv, ...env }, timeout, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
        if (!error) return resolvePromise(stdout);
        const output = (stdout + '\n' + stderr).replace(ansi, '').trim().split('\n').slice(-25).join('\n');
        reject(new Error(`${command} ${args.join(' ')} (in ${relative(base, cwd)}): ${error.killed ? 'timed out' : 'exit ' + error.code}\n${output}`));
      });
    });
  }
  /**
   * Starts a long-running command in a process group of its own; resolves once its output matches
   * `ready` (to the match), rejects if it exits or says nothing matching in time.
   */
  function start(command, args, { cwd, env = {}, ready, timeout = 60_000 }) {
    const child = spawn(command, args, { cwd, env: { ...userEnv, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    background.push(child);
    let output = '';
    return new Promise((resolvePromise, reject) => {
      // Nothing to wait for (a stream that prints only when something happens): running after a second.
      if (!ready) {
        const alive = setTimeout(() => resolvePromise(['']), 1000);
        child.once('exit', (code) => (clearTimeout(alive), reject(new Error(`${command} ${args.join(' ')} exited (${code}) at once:\n${output}`))));
        const keep = (chunk) => void (output += String(chunk));
        child.stdout.on('data', keep);
        child.stderr.on('data', keep);
        return;
      }
      const timer = setTimeout(
        () => reject(new Error(`${command} ${args.join(' ')}: nothing matching ${ready} within ${timeout / 1000} s:\n${output.slice(-2000)}`)),
        timeout,
      );
      const onData = (chunk) => {
        output += String(chunk).replace(ansi, '');
        const match = ready.exec(output);
        if (match) {
          clearTimeout(timer);
          resolvePromise(match);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
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
  return { run, start, stopAll };
}

/** Splits a line into words (quotes kept together and removed) and its `# comment`. */
export function parseLine(line) {
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
  if (quote) fail('unbalanced quote in a document line: ' + line);
  if (word !== null) words.push(word);
  return { words, comment: '' };
}

/**
 * The example blocks of `documents` by the file they show (`<!-- example: examples/x.ts -->`),
 * and their try blocks in order, each with the document and line it comes from.
 */
export function documentBlocks(root, documents, read) {
  const shown = new Map();
  const tries = [];
  for (const document of documents) {
    for (const block of readmeBlocks(read(join(root, document)))) {
      if (block.marker === 'example') shown.set(block.argument, { path: block.argument, code: block.code, document });
      if (block.marker === 'try') tries.push({ ...block, document });
    }
  }
  return { shown, tries };
}

/**
 * The first line of a block that sh would run while a server the block started with `&` is still
 * starting (a command after it, other than another `… &` or an `export`), with that server's line;
 * undefined when there is none. The emulated shell waits for each server; sh does not.
 */
export function raceAfterBackground(code) {
  let server;
  for (const text of code.split('\n')) {
    const { words } = parseLine(text);
    if (!words.length) continue;
    if (words.at(-1) === '&') server ??= text.trim();
    else if (server && words[0] !== 'export') return { server, line: text.trim() };
  }
  return undefined;
}

/** The folder a block's first line enters (`mkdir -p x && cd x`, `cd x`), or undefined. */
export function enteredFolder(code) {
  const { words } = parseLine(code.split('\n')[0]);
  const at = words.lastIndexOf('cd');
  return at !== -1 && (at === 0 || words[at - 1] === '&&') && words[at + 1] && words[at + 2] === undefined ? words[at + 1] : undefined;
}

/**
 * The files a try block names, each `examples/…` path (`=dest` to say where it goes in the
 * project); by default a quick start's file keeps its path below `examples/quick-starts/<stack>/`,
 * any other goes to the folder itself.
 */
export function namedFiles(argument) {
  return (argument ?? '')
    .split(/\s+/)
    .filter((name) => name && !KEYWORDS.includes(name))
    .map((name) => {
      const [from, to] = name.split('=');
      const stack = /^examples\/quick-starts\/[\w-]+\/(.+)$/.exec(from);
      return { from, to: to ?? (stack ? stack[1] : basename(from)) };
    });
}

/**
 * A reader's shell: its variables, its folder, the servers it started and their real addresses.
 * `block()` runs one try block's lines; the files it names are written (as shown, with the
 * servers' real addresses) into the folder its first line enters before it runs, else before its
 * first `npx`, or at its end.
 * `scaffolds`: `{ 'npx words before the folder': check(folder) }`: the command runs as written,
 * before the block's files are written, and `check` looks at what it made.
 */
export function createShell({ runner, tgz, pins, shown, scaffolds = {}, redis }) {
  const env = {};
  const serverEnv = {};
  const urls = new Map();
  const real = (text) => [...urls].reduce((t, [said, actual]) => t.replaceAll(said, actual), text);
  let cwd;
  let pending = [];

  /** The demos `npm run demo` started, by the address each printed. */
  const demos = [];

  /** A second `channel-sandbox start`: the running sandbox serves, if it pushes where the line says. */
  async function sameSandbox(args) {
    const said = args[args.indexOf('--webhook-url') + 1];
    if (!args.includes('--webhook-url')) return;
    const stats = await (await fetch(urls.get(SANDBOX) + '/__sandbox/stats')).json();
    if (stats.webhookUrl !== said)
      fail(
        `\`channel-sandbox start --webhook-url ${said}\`: the running sandbox pushes to ${stats.webhookUrl ?? 'nothing'}; start the documents' first sandbox with that URL`,
      );
  }

  function writePending() {
    for (const { from, to } of pending.splice(0)) {
      const example = shown.get(from);
      if (!example) fail(`a try block names ${from}, which no document shows`);
      mkdirSync(dirname(join(cwd, to)), { recursive: true });
      writeFileSync(join(cwd, to), real(example.code));
      // Your code, which the document leaves to you: its stand-ins, as a document shows them.
      for (const [, imported] of example.code.matchAll(/from '\.\/([\w-]+)\.js'/g)) {
        const standIn = [...shown.keys()].find((path) => path.endsWith('/' + imported + '.ts'));
        if (!standIn) fail(`${from} imports ./${imported}.js, and no document shows ${imported}.ts`);
        if (!existsSync(join(cwd, imported + '.ts'))) writeFileSync(join(cwd, imported + '.ts'), shown.get(standIn).code);
      }
    }
  }

  async function npmInstall(args, own) {
    const specs = [];
    for (const name of args) {
      if (name.startsWith('-')) specs.push(name);
      else if (name === 'channel-sdk') specs.push(tgz);
      else if (/^(@?[^@]+)@\d+\.\d+\.\d+(?:-[\w.]+)?$/.test(name)) specs.push(name);
      else if (pins[name]) specs.push(`${name}@${pins[name]}`);
      else fail(`a document installs ${name}: pin its version (the pins of test/readme/fresh-projects.mjs)`);
    }
    await runner.run('npm', ['install', '--no-audit', '--no-fund', ...specs], { cwd, env: { ...env, ...own }, timeout: 900_000 });
  }

  async function command(words, { inBackground, prints }) {
    const assignments = [];
    while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) assignments.push(words.shift());
    const own = Object.fromEntries(assignments.map((a) => [a.slice(0, a.indexOf('=')), real(a.slice(a.indexOf('=') + 1))]));
    const [program, ...args] = words.map(real);
    if (program === 'export') {
      for (const a of args) env[a.slice(0, a.indexOf('='))] = a.slice(a.indexOf('=') + 1);
      return;
    }
    if (program === 'mkdir') {
      const parents = args.includes('-p');
      for (const dir of args.filter((a) => a !== '-p')) {
        if (!parents && existsSync(join(cwd, dir)))
          fail(`mkdir ${dir}: File exists (in sh a following \`&& cd ${dir}\` would not run): make a folder the reader has put files in with mkdir -p`);
        mkdirSync(join(cwd, dir), { recursive: parents });
      }
      return;
    }
    if (program === 'cd' && args.length === 1) {
      if (!existsSync(join(cwd, args[0]))) fail(`cd ${args[0]}: no such directory`);
      cwd = resolve(cwd, args[0]);
      return;
    }
    const scaffold = program === 'npx' && Object.keys(scaffolds).find((said) => args.join(' ').startsWith(said + ' '));
    if (scaffold) {
      const target = join(cwd, args[scaffold.split(' ').length]);
      await runner.run('npx', args, { cwd, env: { ...env, ...own }, timeout: 600_000 });
      return void (await scaffolds[scaffold](target));
    }
    if (program === 'npx') writePending();
    if (program === 'echo' && args.length === 3 && args[1] === '>') {
      // As sh does: the folder must exist already.
      if (!existsSync(dirname(join(cwd, args[2])))) fail(`echo … > ${args[2]}: no such directory (the document must create it first)`);
      writeFileSync(join(cwd, args[2]), args[0] + '\n');
      return;
    }
    if (program === 'npm' && ['install', 'i'].includes(args[0])) return npmInstall(args.slice(1), own);
    if (program === 'npm' && ['init', 'pkg'].includes(args[0])) return void (await runner.run('npm', args, { cwd, env: { ...env, ...own } }));
    if (program === 'npm' && args[0] === 'run' && args[1] === 'demo') {
      const port = own.PORT ?? String(await freePort());
      const [, url] = await runner.start('npm', args, {
        cwd,
        env: { ...env, ...own, PORT: port },
        ready: /channel-sdk demo ready: open (http:\/\/\S+)/,
        timeout: 300_000,
      });
      return void demos.push(url);
    }
    if (program === 'npm' && (args[0] === 'test' || args[0] === 'run'))
      return void (await runner.run('npm', args, { cwd, env: { ...env, ...own }, timeout: 900_000 }));
    if (program === 'curl') {
      if (args.includes('-N') || args.some((a) => /^-\w*N/.test(a)))
        return void (await runner.start('curl', args, { cwd, env: { ...env, ...own }, ready: /: channel-sandbox/ }));
      return void (await runner.run('curl', ['--fail-with-body', ...args], { cwd, env: { ...env, ...own } }));
    }
    if (program === 'redis-server') {
      // A Redis started with the document's arguments: what its redis://127.0.0.1:6379 means from now on.
      if (!redis) fail(`\`${words.join(' ')}\`: this stage starts no redis-server here`);
      urls.set(REDIS, await redis(args));
      return;
    }
    if (program !== 'npx')
      fail(`this stage does not know how to run \`${words.join(' ')}\`: teach it (test/readme/reader-shell.mjs), or write the line differently`);
    const npx = args;
    // The sandbox the documents' default address means, for the CLI's own default too.
    const noInstall = { npm_config_yes: 'false', ...(urls.has(SANDBOX) ? { CHANNEL_SANDBOX_URL: urls.get(SANDBOX) } : {}) };
    const sandboxCommand = args[0] === 'channel-sandbox' ? (args[1] === undefined || args[1].startsWith('-') ? 'start' : args[1]) : undefined;
    if (sandboxCommand === 'start' && urls.has(SANDBOX)) return sameSandbox(args);
    if (sandboxCommand === 'start') {
      const [ready] = await runner.start('npx', [...npx, '--port', '0', '--json'], {
        cwd,
        env: { ...env, ...own, ...noInstall },
        ready: /^\{"event":"ready".*\}$/m,
      });
      urls.set(SANDBOX, JSON.parse(ready).url); // its default address, which the documents use
      return;
    }
    if (sandboxCommand === 'listen' || sandboxCommand === 'events')
      return void (await runner.start('npx', npx, { cwd, env: { ...env, ...own, ...noInstall }, ready: sandboxCommand === 'listen' ? /^Ready: /m : null }));
    if (inBackground) {
      const address = LOCAL_URL.exec(prints ?? '');
      // A process that serves no address (a queue's worker): running once it prints what the document says.
      if (!address && prints) {
        const ready = new RegExp(escape(real(prints)));
        return void (await runner.start('npx', npx, { cwd, env: { ...env, ...own, ...serverEnv, ...noInstall }, ready, timeout: 120_000 }));
      }
      if (!address) fail(`\`${words.join(' ')} &\`: say where it listens (# prints: … http://127.0.0.1:PORT), or what it prints once running`);
      const port = urls
        .get('http://127.0.0.1:' + address[2])
        .split(':')
        .at(-1); // reserved when the line was read
      const given = npx.map((arg) => (arg === address[2] ? port : arg));
      const extra = given.includes(port) ? {} : { PORT: port };
      const ready = new RegExp(escape(prints).replace(escape(address[0]), escape(address[1]) + ':' + port));
      await runner.start('npx', given, { cwd, env: { ...env, ...own, ...extra, ...serverEnv, ...noInstall }, ready, timeout: 120_000 });
      return;
    }
    const stdout = await runner.run('npx', npx, { cwd, env: { ...env, ...own, ...noInstall }, timeout: 900_000 });
    if (prints && stdout.trim() !== real(prints))
      fail(`\`${words.join(' ')}\` printed ${JSON.stringify(stdout.trim())}, the document says ${JSON.stringify(prints)}`);
  }

  /** Runs one line: commands joined by &&, maybe ending in & (background). */
  async function line(text) {
    // An address means the same free port wherever it appears, before its server starts too.
    for (const [, , port] of text.matchAll(new RegExp(LOCAL_URL, 'g'))) {
      if (port === SANDBOX.split(':').at(-1) || urls.has('http://127.0.0.1:' + port)) continue;
      const got = String(await freePort());
      for (const host of ['http://127.0.0.1', 'http://localhost']) urls.set(`${host}:${port}`, `${host}:${got}`);
    }
    if (text.includes(REDIS) && !urls.has(REDIS)) {
      if (!redis) fail(`a document names ${REDIS}: this stage starts no redis-server here`);
      urls.set(REDIS, await redis());
    }
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
  }

  return {
    env,
    urls,
    real,
    demos,
    /** Variables for the servers only (what the stand-ins read). */
    serverEnv,
    get cwd() {
      return cwd;
    },
    /** Runs a try block from `dir`: its lines, the files it names written where they go. */
    async block(block, dir) {
      const race = raceAfterBackground(block.code);
      if (race)
        fail(
          `${block.document}:${block.line}: \`${race.line}\` follows \`${race.server}\` in one block: sh runs it while that server is still starting; end the block with its servers and run the rest in the next one`,
        );
      cwd = dir;
      pending = namedFiles(block.argument);
      const folder = enteredFolder(block.code);
      if (pending.length && folder) {
        // The reader put the files in the folder first, as the document says; then the block runs.
        cwd = join(dir, folder);
        mkdirSync(cwd, { recursive: true });
        writePending();
        cwd = dir;
      }
      for (const text of block.code.split('\n')) await line(text);
      writePending();
      return cwd;
    },
  };
}
