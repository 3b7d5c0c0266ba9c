// @vitest-environment node
// The options of the app's life and the network (issue #45): offline and retryBudget, on the
// client and on a call, checked like every option (unknown key: ConfigError with "did you mean").
import { describe, expect, test } from 'vitest';
import { createClient as createBrowserClient } from '../../src/index.js';

describe('retryBudget and offline options are checked like the others', () => {
  const ok = { baseUrl: 'https://api.example.com', tokenProvider: () => 'a.b.c' };
  test.each([
    ['retryBudget: true', { retryBudget: true }, /retryBudget must be false \(no budget\) or \{ max/],
    ['a misspelt budget key', { retryBudget: { maxx: 3 } }, /unknown retryBudget option "maxx"; did you mean "max"\?/],
    ['a negative max', { retryBudget: { max: -1 } }, /retryBudget\.max must be a number of retries from 0 to 1000; got -1/],
    ['a ratio above 1', { retryBudget: { ratio: 2 } }, /retryBudget\.ratio must be a number from 0 to 1/],
    ['a misspelt option', { retrybudget: {} }, /unknown option "retrybudget"; did you mean "retryBudget"\?/],
    ['offline: true', { offline: true }, /offline must be an object, e.g. \{ wait: 30000 \}/],
    ['a misspelt offline key', { offline: { wai: 1 } }, /unknown offline option "wai"; did you mean "wait"\?/],
    ['a negative wait', { offline: { wait: -5 } }, /offline\.wait must be a number of milliseconds from 0/],
    ['methods not a list', { offline: { methods: 'GET' } }, /offline\.methods must be an array of method names/],
  ])('%s -> ConfigError', (_label, extra, message) => {
    expect(() => createBrowserClient({ ...ok, ...(extra as object) } as never)).toThrow(message);
  });

  test('offline: false is a client option (the network not followed), not a call option', async () => {
    expect(() => createBrowserClient({ ...ok, offline: false })).not.toThrow();
    const client = createBrowserClient(ok);
    await expect(client.get('/x', { offline: false } as never)).rejects.toThrow(/offline must be an object/);
  });

  test('a call option offline is checked before anything is sent', async () => {
    const client = createBrowserClient(ok);
    await expect(client.get('/x', { offline: { within: 5 } } as never)).rejects.toThrow(/unknown offline option "within"/);
    await expect(client.get('/x', { offlin: {} } as never)).rejects.toThrow(/unknown request option "offlin"; did you mean "offline"\?/);
  });
});
