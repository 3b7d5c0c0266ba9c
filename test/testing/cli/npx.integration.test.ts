/**
 * Issue #23, item 3: the CLI outside a project. `npx channel-sandbox …` in a folder without
 * channel-sdk asks the registry for a package NAMED channel-sandbox (someone else's, or none);
 * the README's `npx -p channel-sdk channel-sandbox …` asks for channel-sdk and runs its bin.
 * Run with npx itself, from an empty folder, against a registry on 127.0.0.1 that serves this
 * package's packed tarball as `channel-sdk` and records every name it is asked for (an empty
 * npm cache and user config, so nothing comes from elsewhere). Needs `npm run build` first.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
let work: string;
let registry: Server;
let registryUrl: string;
let tarball: string;
const asked: string[] = [];

/** A user's environment: none of the npm_* variables the test runner's `npm run` set. */
const userEnv = () => Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));

function run(command: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(command, args, { cwd, env: userEnv(), timeout: 120_000 }, (error, stdout, stderr) =>
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'channel-sdk-npx-'));
  // The tarball users get (dist/ is built already: --ignore-scripts skips prepack's rebuild).
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], root);
  if (packed.code !== 0) throw new Error('npm pack failed: ' + packed.stderr);
  tarball = join(work, (JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ filename: string }>)[0].filename);
  const bytes = readFileSync(tarball);
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  registry = createServer((req, res) => {
    const path = decodeURIComponent(req.url ?? '');
    asked.push(path);
    if (path === '/channel-sdk') {
      const dist = {
        tarball: `${registryUrl}/channel-sdk/-/channel-sdk-${version}.tgz`,
        integrity: 'sha512-' + createHash('sha512').update(bytes).digest('base64'),
        shasum: createHash('sha1').update(bytes).digest('hex'),
      };
      const packument = {
        name: 'channel-sdk',
        'dist-tags': { latest: version },
        versions: { [version]: { ...manifest, _id: `channel-sdk@${version}`, dist } },
      };
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument));
    }
    if (path === `/channel-sdk/-/channel-sdk-${version}.tgz`) return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(bytes);
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
  });
  await new Promise<void>((r) => registry.listen(0, '127.0.0.1', r));
  registryUrl = `http://127.0.0.1:${(registry.address() as AddressInfo).port}`;
}, 120_000);

afterAll(() => {
  registry?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** npx in a fresh empty folder, with its own empty cache and user config, against the test registry. */
async function npx(args: string[]) {
  const dir = mkdtempSync(join(work, 'empty-'));
  writeFileSync(join(dir, '.npmrc-user'), '');
  asked.length = 0;
  // --no-update-notifier and --no-audit: npm's own calls (GET /npm, the advisories), not package resolution.
  const isolated = [
    '--registry',
    registryUrl,
    '--cache',
    join(dir, '.npm-cache'),
    '--userconfig',
    join(dir, '.npmrc-user'),
    '--no-update-notifier',
    '--no-audit',
    '--no-fund',
  ];
  const result = await run('npx', ['--yes', ...isolated, ...args], dir);
  return { ...result, asked: [...new Set(asked)] };
}

test(
  '`npx -p channel-sdk channel-sandbox --help` from an empty folder asks the registry for channel-sdk only, and runs our CLI',
  { timeout: 180_000 },
  async () => {
    const result = await npx(['-p', 'channel-sdk', 'channel-sandbox', '--help']);
    expect({ code: result.code, asked: result.asked }).toEqual({ code: 0, asked: ['/channel-sdk', `/channel-sdk/-/channel-sdk-${version}.tgz`] });
    expect(result.stdout).toMatch(/^channel-sandbox: a local emulation of the Channel Integration Service/);
    expect(result.stdout).toContain('channel-sandbox check token-route <url>');
    // And a command that talks to a sandbox: nothing there, one clear line, exit 1.
    const nowhere = await npx(['-p', 'channel-sdk', 'channel-sandbox', 'stats', '--sandbox', 'http://127.0.0.1:9']);
    expect({ code: nowhere.code, stderr: nowhere.stderr.trim().split('\n').at(-1) }).toEqual({
      code: 1,
      stderr: expect.stringMatching(/^channel-sandbox: no sandbox at http:\/\/127\.0\.0\.1:9 /),
    });
  },
);

test('the README and docs/guide/sandbox.md give the command that names the package, for use outside a project', () => {
  for (const file of ['README.md', 'docs/guide/sandbox.md'])
    expect({ file, says: readFileSync(join(root, file), 'utf8').includes('npx -p channel-sdk channel-sandbox') }).toEqual({ file, says: true });
});

test('the packed tarball itself: `npx -p ./channel-sdk-<version>.tgz channel-sandbox --help` asks the registry for nothing', { timeout: 180_000 }, async () => {
  const result = await npx(['-p', tarball, 'channel-sandbox', '--help']);
  expect({ code: result.code, asked: result.asked }).toEqual({ code: 0, asked: [] });
  expect(result.stdout).toMatch(/^channel-sandbox: a local emulation/);
});

test(
  'why the README does not say `npx channel-sandbox` outside a project: npx asks the registry for a package named channel-sandbox',
  { timeout: 180_000 },
  async () => {
    const result = await npx(['channel-sandbox', 'stats']);
    expect(result.asked).toEqual(['/channel-sandbox']);
    expect(result.code).not.toBe(0); // here nobody publishes it; on the public registry that name is not ours
  },
);
