/**
 * `channel-sandbox doctor` as a partner runs it: the built dist/sandbox-cli.js in a subprocess, in
 * the project's folder (its ioredis found from there), against real processes: sandboxes started
 * by the CLI (one with its clock 600 s ahead), the partner backend of doctor-backend.ts (the
 * README's Express backend and inbox recipe, and routes and receivers with one fault each), real
 * redis-servers (appendonly yes + noeviction with a password; allkeys-lru; no persistence).
 * A healthy set-up gives every line ✓; each fault, seeded alone, is named by its own line while
 * every other line stays ✓ (or – for what was not given).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Redis } from 'ioredis';
import { createRedisInbox } from '../../../src/server-node.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hasRedis } from '../../helpers/redis.js';
import { controlsOf, freePort, spawnServer } from '../../helpers/redis-server.mjs';
import { runIdleWorker, seedDeadLetter, seedWaitingPush } from './dead-letter.js';
import { echoes } from './doctor-echoes.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const cli = join(root, 'dist/sandbox-cli.js');
const keys = { accessKey: 'ak_doctor_test', secretKey: 'sk_doctor_0123456789abcdef' };
const webhookSecret = 'whsec_doctor_secret_value';
const redisPassword = 'redis-pass-7f3a91';
const session = 'demo-session'; // the README's stand-in session (examples/backend/your-app.ts)
const stops: Array<() => unknown> = [];
afterAll(async () => {
  for (const stop of stops.toReversed()) await stop();
}, 30_000);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}
/** One CLI command to its end. */
function run(args: string[], env: Record<string, string> = {}, cwd = root): Promise<Run> {
  const started = performance.now();
  return new Promise((resolve) => {
    const blank = { CHANNEL_BASE_URL: '', CHANNEL_ACCESS_KEY: '', CHANNEL_SECRET_KEY: '', CHANNEL_WEBHOOK_SECRET: '', REDIS_URL: '' };
    const child = spawn(process.execPath, [cli, ...args], { cwd, env: { ...process.env, ...blank, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Math.round(performance.now() - started) }));
  });
}

/** A long-running process; resolves with its first line matching `ready`. */
async function background(command: string[], ready: RegExp, env: Record<string, string> = {}): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, command, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  stops.push(() => (child.exitCode === null ? new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM'))) : undefined));
  let output = '';
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      output += d;
      const found = output.split('\n').find((l) => ready.test(l));
      if (found) resolve(found);
    });
    child.stderr!.on('data', (d) => (output += d));
    child.once('exit', (code) => reject(new Error(`${command.join(' ')} exited ${code}: ${output}`)));
  });
  return { child, line };
}

/** A private redis-server with these settings. */
async function redisServer(...settings: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'channel-doctor-redis-'));
  for (;;) {
    const port = await freePort();
    const child = await spawnServer(['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--daemonize', 'no', '--save', '', ...settings]);
    if (!child) continue;
    const { stop } = controlsOf(child, () => rmSync(dir, { recursive: true, force: true }));
    stops.push(stop);
    return `redis://127.0.0.1:${port}`;
  }
}

/** A sandbox started by the CLI: its URL. */
async function sandbox(...extra: string[]): Promise<string> {
  const args = ['start', '--port', '0', '--json', '--quiet', '--access-key', keys.accessKey, '--secret-key', keys.secretKey, ...extra];
  const { line } = await background([cli, ...args], /"event":"ready"/);
  return (JSON.parse(line) as { url: string }).url;
}

type Status = 'pass' | 'fail' | 'warn' | 'skip';
interface Report {
  ok: boolean;
  counts: Record<Status, number>;
  parts: Array<{ target: string; url: string; checks: Array<{ id: string; status: Status; detail: string; fix?: string }> }>;
}
const linesOf = (report: Report) => report.parts.flatMap((p) => p.checks.map((c) => ({ ...c, part: p.target })));
/**
 * Every line that is neither ✓ nor –, as `part/id: status`. A timing line may warn (never fail)
 * on a machine busy enough to take 2 s for a call: runs here go 5 at a time on shared cores.
 */
const findings = (report: Report) =>
  linesOf(report)
    .filter((c) => c.status === 'fail' || (c.status === 'warn' && c.id !== 'timing'))
    .map((c) => `${c.part}/${c.id}: ${c.status}`);

let service = '';
let skewed = '';
let backend = '';
let healthyRedis = '';
let lruRedis = '';
let bareRedis = '';

describe.runIf(hasRedis)('channel-sandbox doctor', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    [service, skewed, healthyRedis, lruRedis, bareRedis] = await Promise.all([
      sandbox('--webhook-secret', webhookSecret),
      sandbox('--clock-offset', '600'),
      redisServer('--appendonly', 'yes', '--maxmemory-policy', 'noeviction', '--requirepass', redisPassword).then((url) =>
        url.replace('//', `//:${redisPassword}@`),
      ),
      redisServer('--appendonly', 'yes', '--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru'),
      redisServer('--appendonly', 'no', '--maxmemory-policy', 'noeviction'),
    ]);
    // A dead letter under its own prefix: a push whose callback failed its one attempt; a push
    // waiting under another, with no worker.
    const redis = new Redis(healthyRedis);
    await seedDeadLetter(redis, 'dead:', 'SO-dead');
    await seedWaitingPush(redis, 'idle:', 'SO-idle');
    // Workers wherever a fault test points doctor at an inbox, so that each names its own fault only.
    const others = [new Redis(lruRedis), new Redis(bareRedis)];
    const workers = [runIdleWorker(redis, 'dead:'), ...others.map((client) => runIdleWorker(client, 'myapp:'))];
    stops.push(async () => {
      await Promise.all(workers.map((close) => close()));
      for (const client of [redis, ...others]) client.disconnect();
    });
    // The partner backend, bundled as the inbox examples test does (packages from node_modules).
    mkdirSync(join(root, '.tmp'), { recursive: true });
    const dir = mkdtempSync(join(root, '.tmp', 'doctor-'));
    stops.push(() => rmSync(dir, { recursive: true, force: true }));
    await build({
      entryPoints: [join(root, 'test/testing/cli/doctor-backend.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      outfile: join(dir, 'backend.mjs'),
      logLevel: 'silent',
    });
    const { line } = await background([join(dir, 'backend.mjs')], /^listening on /, {
      CHANNEL_BASE_URL: service,
      CHANNEL_ACCESS_KEY: keys.accessKey,
      CHANNEL_SECRET_KEY: keys.secretKey,
      CHANNEL_WEBHOOK_SECRET: webhookSecret,
      REDIS_URL: healthyRedis,
      SKEWED_BASE_URL: skewed,
    });
    backend = line.slice('listening on '.length);
  }, 60_000);

  /** The README's set-up, from the README's CHANNEL_* variables and REDIS_URL. */
  const readmeEnv = () => ({
    CHANNEL_BASE_URL: service,
    CHANNEL_ACCESS_KEY: keys.accessKey,
    CHANNEL_SECRET_KEY: keys.secretKey,
    CHANNEL_WEBHOOK_SECRET: webhookSecret,
    REDIS_URL: healthyRedis,
  });
  const readmeArgs = () => [
    '--token-route',
    backend + '/channel-token',
    '--header',
    `cookie: session=${session}`,
    '--webhook-url',
    backend + '/webhooks/inbox',
    '--prefix',
    'myapp:',
  ];

  test('a healthy set-up (the README backend and inbox recipe, the sandbox, redis-server --appendonly yes --maxmemory-policy noeviction): every line ✓, exit 0', async () => {
    const text = await run(['doctor', ...readmeArgs()], readmeEnv());
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^channel-sandbox doctor\n\nservice http:\/\/127\.0\.0\.1:\d+, from CHANNEL_BASE_URL\n✓ the keys sign a token exchange: HTTP 200/,
    );
    expect(text.stdout).not.toMatch(/^✗|^⚠ (?!time per call|answers within the 8 s window)/m);
    const json = await run(['doctor', ...readmeArgs(), '--json'], readmeEnv());
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as Report;
    expect(findings(report)).toEqual([]);
    expect(report.parts.map((p) => p.target)).toEqual(['service', 'token-route', 'webhook', 'redis']);
    // Not checked, and why: the README's route answers GET only.
    const skipped = linesOf(report).filter((c) => c.status === 'skip');
    expect(skipped.map((c) => c.id)).toEqual(['force-post']);
    // The backend's inbox worker, seen by inbox.stats() (#43).
    expect(linesOf(report).find((c) => c.id === 'workers')).toMatchObject({ status: 'pass', detail: expect.stringMatching(/^[1-9]\d* recently$/) });
    expect(linesOf(report).find((c) => c.id === 'token')?.detail).toMatch(/a JWT this sandbox issued, for "user-1"/);
    expect(linesOf(report).find((c) => c.id === 'duplicate')?.detail).toMatch(/\{"duplicate":true\}/);
  });

  // Each fault alone: the options that seed it, and the lines that must name it (all others ✓ or –),
  // and for some the fix a line must give.
  const faults: Array<[string, (base: string) => { args: string[]; env?: Record<string, string> }, Record<string, RegExp>, Record<string, RegExp>?]> = [
    [
      'a wrong access key',
      (b) => ({ args: ['--token-route', b + '/fault/wrong-access-key/channel-token'], env: { CHANNEL_ACCESS_KEY: 'ak_not_this_one' } }),
      {
        'service/keys: fail': /code":40104.*the service does not know the access key ak_not…/,
        'token-route/token: fail': /HTTP 502 .*the keys line above/,
      },
    ],
    [
      'a wrong secret key',
      (b) => ({ args: ['--token-route', b + '/fault/wrong-secret-key/channel-token'], env: { CHANNEL_SECRET_KEY: 'sk_not_this_one_either' } }),
      { 'service/keys: fail': /40101.*is known, the signature does not match: the secret key is wrong/, 'token-route/token: fail': /HTTP 502/ },
    ],
    [
      "a clock 600 s from the service's",
      (b) => ({ args: ['--token-route', b + '/fault/skewed/channel-token'], env: { CHANNEL_BASE_URL: skewed } }),
      {
        'service/keys: fail': /40102.*the signature's time is outside the window/,
        'service/clock: fail': /^(599|600|601) s behind \(by its Date header, ±1 s\): beyond the ±300 s window/,
        'token-route/token: fail': /HTTP 502/,
      },
    ],
    [
      'a route that answers the cached token when forced',
      (b) => ({ args: ['--token-route', b + '/fault/cached-force/channel-token'] }),
      {
        'token-route/force-query: fail': /answered the cached token #\d+ again/,
        'token-route/force-post: fail': /answered the cached token/,
        'token-route/rejected: fail': /the very token it named/,
      },
    ],
    [
      'a route that answers { token }',
      (b) => ({ args: ['--token-route', b + '/fault/token-shape/channel-token'] }),
      { 'token-route/shape: fail': /^\{ token \}: the JWT is in "token"/ },
    ],
    [
      'a route that answers the whole envelope',
      (b) => ({ args: ['--token-route', b + '/fault/envelope/channel-token'] }),
      { 'token-route/shape: warn': /^the service's whole envelope \{ code: 0, data: \{ access_token \} \}/ },
    ],
    [
      'a route that answers the rejected token',
      (b) => ({ args: ['--token-route', b + '/fault/rejected/channel-token'] }),
      { 'token-route/rejected: fail': /answered token #\d+, the very token it named/ },
    ],
    [
      'a route without cross-site refusal',
      (b) => ({ args: ['--token-route', b + '/fault/no-cross-site/channel-token'] }),
      { 'token-route/cross-site: warn': /Sec-Fetch-Site: cross-site.* got HTTP 200 with a token/ },
    ],
    [
      'a route whose CORS grants any origin',
      (b) => ({ args: ['--token-route', b + '/fault/cors-any-origin/channel-token'] }),
      { 'token-route/cors: fail': /Access-Control-Allow-Origin: https:\/\/evil\.example with/ },
    ],
    [
      'a receiver verifying with another secret',
      (b) => ({ args: ['--webhook-url', b + '/fault/other-secret/webhooks/channel'] }),
      { 'webhook/signed: fail': /refused like an unsigned or tampered one: your receiver verifies with another secret/ },
    ],
    [
      'a receiver whose environment lacks the webhook secret: the fix says to set it, not "look at your app\'s log"',
      (b) => ({ args: ['--webhook-url', b + '/fault/no-secret/webhooks/channel'] }),
      { 'webhook/signed: fail': /^HTTP 500 \{"error":"webhook secret not configured"\}/ },
      { 'webhook/signed': /^your receiver has no webhook secret: set it in your app's environment \(CHANNEL_WEBHOOK_SECRET/ },
    ],
    [
      "the README's Express receiver below app.use(express.json()): the fix is the SDK's advice for Express, not \"look at your app's log\"",
      (b) => ({ args: ['--webhook-url', b + '/fault/parsed-first/webhooks/channel'] }),
      { 'webhook/signed: fail': /^HTTP 500 \{"error":"the push body was read by something else/ },
      { 'webhook/signed': /^Express: a body parser .*above app\.use\(express\.json\(\)\)$/ },
    ],
    [
      'a webhook URL with a typo (404): the fix is the path, not "look at your app\'s log"',
      (b) => ({ args: ['--webhook-url', b + '/webhooks/chanel'] }),
      { 'webhook/signed: fail': /^HTTP 404 / },
      { 'webhook/signed': /^nothing takes POST at this path: pass the URL where your app mounts its webhook route/ },
    ],
    [
      "a token route URL with a wrong path (404): the fix is the path, not the exchange's keys",
      (b) => ({ args: ['--token-route', b + '/api/channel-token'] }),
      { 'token-route/token: fail': /^HTTP 404 .*Cannot GET/ },
      { 'token-route/token': /^nothing answers GET at this path: pass the URL where your app mounts its token route/ },
    ],
    [
      'a receiver that runs a repeat twice (the README receiver, no dedup)',
      (b) => ({ args: ['--webhook-url', b + '/webhooks/channel'] }),
      { 'webhook/duplicate: warn': /the repeat got HTTP 200 like a new push/ },
    ],
    [
      'a Redis with allkeys-lru',
      () => ({ args: [], env: { REDIS_URL: lruRedis } }),
      { 'redis/maxmemory-policy: fail': /^allkeys-lru with maxmemory 64\.0 MB: a full Redis deletes keys/ },
    ],
    [
      'a Redis without persistence',
      () => ({ args: [], env: { REDIS_URL: bareRedis } }),
      { 'redis/persistence: warn': /^none \(no append-only file, no snapshots\)/ },
    ],
    ['an inbox with dead letters', () => ({ args: ['--prefix', 'dead:'] }), { 'redis/dead-letters: fail': /^1 push acknowledged and never processed/ }],
    ['an inbox whose pushes wait with no worker running', () => ({ args: ['--prefix', 'idle:'] }), { 'redis/workers: fail': /^none/ }],
  ];

  describe('each fault seeded alone is named by its own line', () => {
    test.concurrent.each(faults)('%s', async (_name, seed, named, fixes = {}) => {
      const { args, env = {} } = seed(backend);
      const user = 'run-' + Math.random().toString(36).slice(2, 8);
      // Everything else healthy: the package's token route (a user of its own), the README's inbox, the healthy Redis.
      const healthy: Record<string, string[]> = {
        '--token-route': ['--token-route', backend + '/fault/ok/channel-token', '--header', `cookie: session=${user}`],
        '--webhook-url': ['--webhook-url', backend + '/webhooks/inbox'],
        '--prefix': ['--prefix', 'myapp:'],
      };
      const given = Object.entries(healthy).flatMap(([option, pair]) => (args.includes(option) ? [] : pair));
      const header = args.includes('--token-route') ? ['--header', `cookie: session=${user}`] : [];
      const result = await run(['doctor', ...args, ...header, ...given, '--json'], { ...readmeEnv(), ...env });
      expect(result.stderr).toBe('');
      const report = JSON.parse(result.stdout) as Report;
      expect(findings(report).toSorted()).toEqual(Object.keys(named).toSorted());
      for (const [line, pattern] of Object.entries(named)) {
        const [part, id] = line.split(/[/:]/);
        expect(linesOf(report).find((c) => c.part === part && c.id === id)?.detail).toMatch(pattern);
      }
      for (const [line, pattern] of Object.entries(fixes)) {
        const [part, id] = line.split('/');
        expect(linesOf(report).find((c) => c.part === part && c.id === id)?.fix).toMatch(pattern);
      }
      expect(result.code).toBe(Object.keys(named).some((line) => line.endsWith('fail')) ? 1 : 0);
      expect(report.ok).toBe(result.code === 0);
    });
  });

  describe('secrets, a service that labels nothing, what it cannot reach, bad arguments', () => {
    test('nothing secret in either output: the secret key, the webhook secret, the session cookie, tokens, the Redis password', async () => {
      const env = {
        CHANNEL_BASE_URL: service,
        CHANNEL_ACCESS_KEY: keys.accessKey,
        CHANNEL_SECRET_KEY: keys.secretKey,
        CHANNEL_WEBHOOK_SECRET: webhookSecret,
        REDIS_URL: healthyRedis,
      };
      const cookie = 'session=sess-9d8c7b6a5f4e';
      const runs = await Promise.all(
        [
          // Healthy, the wrong secret key, a route whose error echoes the cookie and a token, a receiver with another secret.
          [['--token-route', backend + '/fault/ok/channel-token', '--webhook-url', backend + '/webhooks/inbox', '--prefix', 'myapp:'], {}],
          [['--token-route', backend + '/fault/wrong-secret-key/channel-token'], { CHANNEL_SECRET_KEY: 'sk_wrong_but_still_secret' }],
          [['--token-route', backend + '/fault/leaky/channel-token', '--webhook-url', backend + '/fault/other-secret/webhooks/channel'], {}],
        ].flatMap(([args, extra]) =>
          ['', '--json'].map((json) =>
            run(['doctor', ...(args as string[]), '--header', `cookie: ${cookie}`, ...(json ? [json] : [])], { ...env, ...(extra as object) }),
          ),
        ),
      );
      const all = runs.map((r) => r.stdout + r.stderr).join('\n');
      for (const secret of [keys.secretKey, 'sk_wrong_but_still_secret', webhookSecret, 'sess-9d8c7b6a5f4e', redisPassword]) expect(all).not.toContain(secret);
      expect(all).not.toMatch(/eyJ[\w-]+\.[\w-]+/);
      // What was masked, and where: the leaky route's echo, the Redis URL.
      expect(runs[4].stdout).toMatch(/^✗ answers a token for the signed-in user: HTTP 500 \{"error":"no session for \[secret\]","debug":"\[token\]"\}/m);
      expect(runs[0].stdout).toContain(`Redis redis://:***@127.0.0.1:${new URL(healthyRedis).port} (prefix myapp:), from REDIS_URL`);
      expect(runs.map((r) => r.code)).toEqual([0, 0, 1, 1, 1, 1]);
    });

    test('a secret echoed another way is masked too: cut by the 120-character limit, URL-encoded, hex, base64 at each offset', async () => {
      const value = 'sess-9d8c7b6a5f4e';
      const cookie = 'session=' + value;
      const names = Object.keys(echoes);
      const runs = await Promise.all([
        ...names.map((name) =>
          run(['doctor', '--token-route', `${backend}/fault/leaky-${name}/channel-token`, '--header', `cookie: ${cookie}`, '--json'], {
            CHANNEL_BASE_URL: service,
            CHANNEL_ACCESS_KEY: keys.accessKey,
            CHANNEL_SECRET_KEY: keys.secretKey,
          }),
        ),
        run(['doctor', '--webhook-url', backend + '/fault/leaky-cut/webhooks/channel', '--json'], { CHANNEL_WEBHOOK_SECRET: webhookSecret }),
      ]);
      const detail = (r: Run, part: string, id: string) => linesOf(JSON.parse(r.stdout) as Report).find((c) => c.part === part && c.id === id)?.detail ?? '';
      // Each echo, less the few characters at its ends that base64 mixes with the bytes beside it.
      const echoed = names.map((name) =>
        echoes[name](cookie)
          .replace(/^.*no session for /, '')
          .slice(3, -3),
      );
      names.forEach((name, i) => {
        const line = detail(runs[i], 'token-route', 'token');
        const shown = Array.from({ length: echoed[i].length - 5 }, (_, at) => echoed[i].slice(at, at + 6)).filter((w) => line.includes(w));
        expect({ name, masked: /^HTTP 500 .*\[secret\]/.test(line), shown }).toEqual({ name, masked: true, shown: [] });
      });
      // The webhook secret named by a receiver's refusal, cut after its first 23 characters.
      expect(detail(runs[names.length], 'webhook', 'signed')).toMatch(/^HTTP 401 x+ no session for \[secret\]/);
      for (const r of runs) for (const secret of [value, webhookSecret.slice(0, 12)]) expect(r.stdout).not.toContain(secret);
    });

    test('options instead of the CHANNEL_* variables give the same run; a Redis or a service out of reach is a line, not a crash', async () => {
      const closed = await freePort();
      const options = await run([
        'doctor',
        '--service',
        service + '/',
        '--access-key',
        keys.accessKey,
        '--secret-key',
        keys.secretKey,
        '--webhook-url',
        backend + '/webhooks/inbox',
        '--webhook-secret',
        webhookSecret,
        '--redis',
        `redis://127.0.0.1:${closed}`,
        '--json',
      ]);
      const report = JSON.parse(options.stdout) as Report;
      expect(findings(report)).toEqual(['redis/reachable: fail']);
      expect(linesOf(report).find((c) => c.id === 'reachable')?.detail).toBe(
        `could not connect to Redis at redis://127.0.0.1:${closed} within 5 s (connect ECONNREFUSED 127.0.0.1:${closed})`,
      );
      expect(options.ms).toBeLessThan(15_000);
      const nowhere = await run(['doctor', '--service', `http://127.0.0.1:${closed}`, '--access-key', 'a', '--secret-key', 'b']);
      expect(nowhere.code).toBe(1);
      expect(nowhere.stdout).toMatch(
        /^✗ the keys sign a token exchange: no answer from http:\/\/127\.0\.0\.1:\d+\/open\/api\/v1\/sdk\/tokens: connection refused/m,
      );
      expect(nowhere.stdout).toMatch(/^– this machine's clock agrees with the service's: no answer to read its Date from$/m);
    });

    test('run outside a project with a Redis client: the Redis line says where to run it; node-redis alone works as ioredis does', async () => {
      const empty = mkdtempSync(join(tmpdir(), 'channel-doctor-empty-'));
      const nodeRedisOnly = mkdtempSync(join(tmpdir(), 'channel-doctor-node-redis-'));
      mkdirSync(join(nodeRedisOnly, 'node_modules'));
      symlinkSync(join(root, 'node_modules/redis'), join(nodeRedisOnly, 'node_modules/redis'));
      try {
        const none = await run(['doctor', '--redis', healthyRedis, '--json'], {}, empty);
        expect(linesOf(JSON.parse(none.stdout) as Report).find((c) => c.id === 'reachable')).toMatchObject({
          status: 'fail',
          detail: `no Redis client found from ${empty}; run this in your project (with ioredis or redis installed)`,
        });
        const port = await freePort();
        const [refused, fine] = await Promise.all([
          run(['doctor', '--redis', `redis://127.0.0.1:${port}`], {}, nodeRedisOnly),
          run(['doctor', '--redis', healthyRedis, '--prefix', 'myapp:', '--json'], {}, nodeRedisOnly),
        ]);
        expect(refused.stdout).toMatch(/^✗ reachable: could not connect to Redis at redis:\/\/127\.0\.0\.1:\d+ within 5 s \(connect ECONNREFUSED/m);
        expect(refused.ms).toBeLessThan(15_000);
        expect(findings(JSON.parse(fine.stdout) as Report)).toEqual([]);
      } finally {
        rmSync(empty, { recursive: true, force: true });
        rmSync(nodeRedisOnly, { recursive: true, force: true });
      }
    });

    test('a Redis that refuses the password (wrong, or none given): named at once as refused credentials, with the URL form that carries one, through ioredis and node-redis', async () => {
      const nodeRedisOnly = mkdtempSync(join(tmpdir(), 'channel-doctor-node-redis-'));
      mkdirSync(join(nodeRedisOnly, 'node_modules'));
      symlinkSync(join(root, 'node_modules/redis'), join(nodeRedisOnly, 'node_modules/redis'));
      try {
        const wrong = healthyRedis.replace(redisPassword, 'not-the-password');
        const none = healthyRedis.replace(`:${redisPassword}@`, '');
        const runs = await Promise.all([wrong, none].flatMap((url) => [root, nodeRedisOnly].map((cwd) => run(['doctor', '--redis', url, '--json'], {}, cwd))));
        for (const { stdout } of runs) {
          const line = linesOf(JSON.parse(stdout) as Report).find((c) => c.id === 'reachable');
          // Before: "could not connect … within 5 s (WRONGPASS …)" after the whole bound, the fix "start Redis".
          expect(line).toMatchObject({ status: 'fail', detail: expect.stringMatching(/refused the credentials \((WRONGPASS|NOAUTH)/) });
          expect(line?.fix).toBe("give Redis's password in the URL: redis://:PASSWORD@host:6379, or redis://USER:PASSWORD@host:6379 for an ACL user");
          expect(stdout).not.toContain('not-the-password');
        }
      } finally {
        rmSync(nodeRedisOnly, { recursive: true, force: true });
      }
    });

    test('an ACL user with the right password but no right to PING or INFO, and rediss:// to a plain port: each named as what it is, not "check the password" or "start Redis"', async () => {
      const admin = new Redis(healthyRedis);
      await admin.call('ACL', 'SETUSER', 'doctor-nobody', 'on', '>doctor-pw', '~*', '-@all');
      await admin.quit();
      const url = new URL(healthyRedis);
      const [limited, tls] = await Promise.all([
        run(['doctor', '--redis', `redis://doctor-nobody:doctor-pw@${url.host}`, '--json']),
        run(['doctor', '--redis', healthyRedis.replace(/^redis:/, 'rediss:'), '--json']),
      ]);
      const reach = (r: Run) => linesOf(JSON.parse(r.stdout) as Report).find((c) => c.id === 'reachable');
      // Before: the fix "check the URL, the password … and that Redis runs" for a password Redis took.
      expect(reach(limited)).toMatchObject({
        status: 'fail',
        detail: expect.stringMatching(/^NOPERM/),
        fix: expect.stringMatching(/^your password is right.*ACL SETUSER doctor-nobody \+ping \+info/),
      });
      // Before: "could not connect … within 5 s" with no reason, the fix "start Redis" for a Redis that runs.
      expect(reach(tls)).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('it answers plain Redis on that port, not TLS: use redis://'),
        fix: expect.stringMatching(/^use redis:\/\//),
      });
      expect(tls.stdout).not.toContain(redisPassword);
    });

    test('an ACL user without INFO and CONFIG (+@all -@dangerous, a common recipe) whose inbox works: reachable ✓, what cannot be read ⚠ naming it, the inbox lines, exit 0', async () => {
      const admin = new Redis(healthyRedis);
      await admin.call('ACL', 'SETUSER', 'doctor-app', 'on', '>doctor-app-pw', '~*', '&*', '+@all', '-@dangerous');
      await admin.quit();
      const url = `redis://doctor-app:doctor-app-pw@${new URL(healthyRedis).host}`;
      // The app's own client as this user: the inbox reads its state without INFO.
      const app = new Redis(url, { enableReadyCheck: false });
      expect(await createRedisInbox(app, { prefix: 'dead:' }).stats()).toMatchObject({ deadLetters: 1 });
      app.disconnect();
      const result = await run(['doctor', '--redis', url, '--prefix', 'dead:', '--json']);
      const lines = linesOf(JSON.parse(result.stdout) as Report);
      const line = (id: string) => lines.find((c) => c.id === id);
      // Before: ✗ reachable "NOPERM this user has no permissions to run the 'info' command", nothing else checked, exit 1.
      expect(line('reachable')).toMatchObject({
        status: 'pass',
        detail: expect.stringMatching(/^PONG in .*INFO is not allowed here.*version, and whether it is a replica, are unknown/),
      });
      expect(line('maxmemory-policy')).toMatchObject({
        status: 'warn',
        detail: expect.stringMatching(/^neither INFO nor CONFIG GET is allowed here.*the policy is unknown/),
        fix: expect.stringContaining('ACL SETUSER doctor-app +info'),
      });
      expect(line('memory')?.status).toBe('skip');
      expect(line('persistence')).toMatchObject({ status: 'warn', fix: expect.stringMatching(/^check that appendonly is yes/) });
      // The inbox's state still read: its one seeded dead letter is the only failure, as with an admin user.
      expect(lines.filter((c) => c.status === 'fail').map((c) => c.id)).toEqual(['dead-letters']);
      expect(result.stdout).not.toContain('doctor-app-pw');
      const clean = await run(['doctor', '--redis', url, '--prefix', 'myapp:', '--json']);
      expect(clean.code).toBe(0);
    });

    test('a Redis whose provider disabled INFO (rename-command INFO ""): ioredis never gets ready, and the fix names enableReadyCheck: false, not "start Redis"', async () => {
      const noInfo = await redisServer('--rename-command', 'INFO', '');
      const result = await run(['doctor', '--redis', noInfo, '--json']);
      // Before: the fix "start Redis, or pass its URL as --redis (REDIS_URL)…" for a Redis that runs.
      expect(linesOf(JSON.parse(result.stdout) as Report).find((c) => c.id === 'reachable')).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining("unknown command 'info'"),
        fix: expect.stringContaining('enableReadyCheck: false'),
      });
      // The app's own ioredis with that option works: the fix is the one that makes it connect.
      const app = new Redis(noInfo, { enableReadyCheck: false });
      expect(await app.ping()).toBe('PONG');
      app.disconnect();
    });

    /** A stand-in for the real service: the sandbox behind it, its refusals unlabelled (the service publishes no codes). */
    async function unlabelled(mode: 'uniform' | 'distinct' | 'date-ahead'): Promise<string> {
      const server: Server = createServer(async (req, res) => {
        if (req.method !== 'POST' || req.url !== '/open/api/v1/sdk/tokens') return void res.writeHead(404).end();
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name.startsWith('x-channel') || name === 'content-type')) as Record<
          string,
          string
        >;
        const answer = await fetch(service + req.url, { method: 'POST', headers, body: Buffer.concat(chunks) });
        const text = await answer.text();
        const date = mode === 'date-ahead' ? { date: new Date(Date.now() + 400_000).toUTCString() } : {};
        if (answer.ok) return void res.writeHead(200, { 'content-type': 'application/json', ...date }).end(text);
        const code = mode === 'distinct' && (JSON.parse(text) as { code: number }).code === 40104 ? 1002 : 1001;
        res
          .writeHead(401, { 'content-type': 'application/json', ...date })
          .end(JSON.stringify({ code, message: 'invalid credential', request_id: Math.random().toString(16).slice(2) }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      stops.push(() => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }

    test('a service whose refusals are unlabelled: doctor compares with a made-up access key and says what it cannot tell apart', async () => {
      const [uniform, distinct, ahead] = await Promise.all([unlabelled('uniform'), unlabelled('distinct'), unlabelled('date-ahead')]);
      const keysLine = async (base: string, accessKey: string, secretKey: string, extra: string[] = []) => {
        const result = await run(['doctor', '--service', base, '--access-key', accessKey, '--secret-key', secretKey, ...extra, '--json']);
        return JSON.parse(result.stdout) as Report;
      };
      const [wrongSecret, wrongKey, alike, good, skewedDate] = await Promise.all([
        keysLine(distinct, keys.accessKey, 'sk_wrong_0123456789'),
        keysLine(distinct, 'ak_unknown_key', keys.secretKey),
        keysLine(uniform, keys.accessKey, 'sk_wrong_0123456789'),
        keysLine(uniform, keys.accessKey, keys.secretKey, ['--token-route', backend + '/fault/ok/channel-token', '--header', 'cookie: session=real-1']),
        keysLine(ahead, keys.accessKey, keys.secretKey),
      ]);
      const detail = (report: Report, id: string) => linesOf(report).find((c) => c.id === id)?.detail;
      expect(detail(wrongSecret, 'keys')).toMatch(
        /^refused: HTTP 401 \{"code":1001.*; a made-up access key gets HTTP 401 \{"code":1002.*, so the service knows this one: the secret key is wrong, or your backend signs another way than the reference scheme doctor uses; this machine's clock is within \d+ s of the service's, so the signature's time is not the cause$/,
      );
      expect(detail(wrongKey, 'keys')).toMatch(
        /, the same answer as to a made-up access key: the access key ak_unk… is probably unknown to the service \(or it answers every refusal alike/,
      );
      expect(detail(alike, 'keys')).toMatch(/the same answer as to a made-up access key: .*its error codes are not published, so doctor cannot tell\)/);
      // Good keys: the route's tokens are checked by their shape (the service keeps its key), and nothing else fails.
      expect(findings(good)).toEqual([]);
      expect(detail(good, 'token')).toMatch(/: a JWT \(its signature is the service's to check\), for "user-[\da-f]{8}"/);
      // A clock 400 s off that the service accepts anyway: a warning, not a failure.
      expect(findings(skewedDate)).toEqual(['service/clock: warn']);
      expect(detail(skewedDate, 'clock')).toMatch(
        /^(399|400|401) s behind \(by its Date header, ±1 s\): beyond the reference scheme's ±300 s, yet the exchange was accepted/,
      );
    });

    test('a sandbox started with --clock-offset=-900: doctor reports this machine 900 s ahead', async () => {
      const behind = await sandbox('--clock-offset=-900');
      const report = JSON.parse((await run(['doctor', '--service', behind, '--json'])).stdout) as Report;
      expect(linesOf(report).find((c) => c.id === 'clock')).toMatchObject({
        status: 'fail',
        detail: expect.stringMatching(/^(899|900|901) s ahead \(by its Date header, ±1 s\)/),
      });
      expect(findings(report)).toEqual(['service/clock: fail']);
    });

    test('bad arguments exit 2 with what to pass', async () => {
      const cases: Array<[string[], Record<string, string>, RegExp]> = [
        [[], {}, /nothing to check: pass --service URL/],
        [['--service', 'http://127.0.0.1:1', '--access-key', 'a'], {}, /pass both --access-key and --secret-key/],
        [['--access-key', 'a', '--secret-key', 'b'], {}, /the keys need --service/],
        [['--webhook-url', 'http://127.0.0.1:1/hook'], {}, /which secret does your receiver verify with\? pass --webhook-secret/],
        [['--redis', 'redis://127.0.0.1:1', '--prefix'], {}, /unknown or incomplete option --prefix/],
        [['--prefix', 'app:', '--service', 'http://127.0.0.1:1'], {}, /--prefix is the inbox prefix on Redis: pass --redis URL too/],
        [['--header', 'cookie: a=b', '--service', 'http://127.0.0.1:1'], {}, /--header is for the token route/],
        [['--token-route', 'http://127.0.0.1:1/t', '--header', 'no colon'], {}, /--header must be "name: value"/],
        [['--sandbox', 'http://127.0.0.1:1'], {}, /pass the sandbox's URL as --service/],
        [['--redis', 'http://127.0.0.1:1'], {}, /--redis must be a redis:\/\/ URL/],
        [['--service', 'ftp://x'], {}, /--service: must be an absolute http\(s\) URL/],
        [[], { CHANNEL_BASE_URL: 'http://user:pw@127.0.0.1:1' }, /CHANNEL_BASE_URL: must not contain a user name or password/],
        [['--service', 'http://127.0.0.1:1', '--user', 'x'.repeat(129)], {}, /--user: the user id /],
        [['--token-route', '/channel-token'], {}, /--token-route must be an http\(s\) URL/],
        // Before: accepted, then "connection failed: Request cannot be constructed from a URL that includes credentials: http://bob:s3cret-pw@…" in the report.
        [
          ['--token-route', 'http://bob:s3cret-pw@127.0.0.1:1/t'],
          {},
          /--token-route has credentials in it \(user:password@\).*--header "authorization: Basic .*got "http:\/\/\*\*\*@127/,
        ],
        [['--webhook-url', 'http://tok3n-pw@127.0.0.1:1/hook', '--webhook-secret', 'whsec_x'], {}, /--webhook-url has credentials in it/],
        [['--token-route', 'htp://bob:s3cret-pw@127.0.0.1:1/t'], {}, /--token-route must be an http\(s\) URL.*got "htp:\/\/\*\*\*@127/],
      ];
      for (const [args, env, message] of cases) {
        const result = await run(['doctor', ...args], env);
        expect([args.join(' '), result.code, result.stderr]).toEqual([args.join(' '), 2, expect.stringMatching(message)]);
        expect(result.stderr).not.toContain('pw@');
      }
      expect((await run(['doctor', '--help'])).stdout).toMatch(/^channel-sandbox doctor \[--service <url>/);
      expect((await run(['--help'])).stdout).toContain('channel-sandbox doctor --service <url> --access-key <ak> --secret-key <sk> --token-route <url>');
    });
  });
});
