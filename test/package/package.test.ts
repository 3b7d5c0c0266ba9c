/**
 * Runs the built package (dist/) by its name, as users get it: a broken `exports` map,
 * a missing file or a CJS/ESM mismatch fails here. Needs `npm run build` first (npm test does it).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startFakeService, type FakeService } from '../helpers/fake-service.js';

const run = promisify(execFile);
const require = createRequire(import.meta.url);

describe('built package', () => {
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
    test(`${kind} of "channel-sdk" runs a request end to end`, async () => {
      const token = service.issue();
      const { stdout } = await run(process.execPath, [kind.startsWith('ESM') ? '--input-type=module' : '--input-type=commonjs', '-e', flow(load)], {
        env: { ...process.env, SERVICE: service.url, TOKEN: token },
      });
      expect(JSON.parse(stdout)).toEqual({ ok: '/hello', isError: true });
    });
  }

  test('isChannelError recognises an error made in another realm; instanceof does not', () => {
    const code = readFileSync(require.resolve('channel-sdk'), 'utf8');
    const sandbox: Record<string, unknown> = { module: { exports: {} }, require, setTimeout, clearTimeout };
    sandbox.exports = (sandbox.module as { exports: object }).exports;
    vm.runInNewContext(code, sandbox);
    const foreign = (sandbox.module as { exports: Record<string, new (m: string) => Error> }).exports;
    const error = new foreign.UnauthorizedError('from another realm');
    const host = require('channel-sdk') as typeof import('../../src/index.js');
    expect(error instanceof host.ChannelError).toBe(false);
    expect(host.isChannelError(error)).toBe(true);
    expect(host.isChannelError(new Error('plain'))).toBe(false);
    expect(host.isChannelError({ code: 'UNAUTHORIZED' })).toBe(false);
  });

  test('package.json names the entries it ships', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
    expect(pkg.sideEffects).toBe(false);
    expect(Object.keys(pkg.exports['.'].import)[0]).toBe('types');
    expect(Object.keys(pkg.exports['.'].require)[0]).toBe('types');
  });
});
