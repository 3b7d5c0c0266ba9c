/**
 * What the CLI prints when it refuses its arguments (issue #47: nothing secret is printed): a
 * secret typed in the wrong place, an unquoted `--header cookie: session=…` (the shell splits it),
 * a key after the wrong option, a header without its colon, a service URL with a key in its query,
 * is quoted no further than its first word or six characters. `main()` in this process; it throws
 * before anything is sent.
 */
import { describe, expect, test } from 'vitest';
import { main } from '../../../src/testing/cli/cli.js';
import { CliError } from '../../../src/testing/cli/cli-client.js';

const SECRET = 'SECRETSESSION9d8c7b6a';

async function refusal(args: string[]): Promise<CliError> {
  const error = await main(args).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe('channel-sandbox: a mistyped argument is not printed whole', () => {
  test.each([
    [
      'an unquoted --header (the shell splits it)',
      ['doctor', '--token-route', 'http://127.0.0.1:1/t', '--header', 'cookie:', `session=${SECRET}`],
      '"session=…"',
    ],
    ['a secret key after the wrong option', ['doctor', '--access-key', 'ak_live_1', `sk_live_${SECRET}`], '"sk_liv…"'],
    ['check: an extra word after the URL', ['check', 'token-route', 'http://127.0.0.1:1/t', `Bearer ${SECRET}`], '"Bearer…"'],
    ['a header without its colon', ['doctor', '--token-route', 'http://127.0.0.1:1/t', '--header', `cookie session=${SECRET}`], '"cookie…"'],
    ['a header with = for :', ['check', 'token-route', 'http://127.0.0.1:1/t', '--header', `Cookie=session=${SECRET}`], '"Cookie=…"'],
    ['a bare token as a header', ['doctor', '--token-route', 'http://127.0.0.1:1/t', '--header', SECRET], '"SECRET…"'],
    ['a service URL with a key in its query', ['doctor', '--service', `http://127.0.0.1:1/api?api_key=${SECRET}`], 'api_key=***'],
  ])('%s', async (_case, args, quoted) => {
    const error = await refusal(args);
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain(quoted);
    expect(error.message).not.toContain(SECRET.slice(0, 10));
  });

  test('a short extra word is still quoted whole', async () => {
    expect((await refusal(['expire', 'now'])).message).toContain('unexpected argument "now"');
  });
});

describe('channel-sandbox doctor and inbox: a Redis password with / or # pasted as it is', () => {
  // Generated passwords are often base64: a / or a # ends the URL's host early, and the URL does not parse.
  test.each([
    ['doctor, / in the password', ['doctor', '--redis', `redis://:Ab/${SECRET}==@127.0.0.1:6379`], '--redis'],
    ['doctor, # in the password', ['doctor', '--redis', `redis://default:Ab#${SECRET}@127.0.0.1:6379`], '--redis'],
    ['inbox stats, ? in the password', ['inbox', 'stats', '--redis', `redis://:Ab?${SECRET}@127.0.0.1:6379`], '--redis'],
  ])('%s: exit 2 naming the encoding, the password not printed', async (_case, args, name) => {
    const error = await refusal(args);
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain(`${name} is not a valid URL: percent-encode a password`);
    expect(error.message).toContain('redis://***@127.0.0.1:6379');
    expect(error.message).not.toContain(SECRET.slice(0, 10));
  });

  test('from REDIS_URL: the variable is named, not an option the user did not pass', async () => {
    const before = process.env.REDIS_URL;
    process.env.REDIS_URL = 'localhost:6379';
    try {
      expect((await refusal(['doctor', '--token-route', 'http://127.0.0.1:1/t'])).message).toContain(
        'doctor: REDIS_URL must be a redis:// URL; got "localhost:6379"',
      );
    } finally {
      if (before === undefined) delete process.env.REDIS_URL;
      else process.env.REDIS_URL = before;
    }
  });
});

describe('channel-sandbox doctor and check: a --header value fetch cannot send', () => {
  test.each([
    ['beyond Latin-1', `cookie: session=秘密${SECRET}`],
    ['a line break', `cookie: session=${SECRET}\nx-admin: 1`],
  ])('%s: exit 2 naming the header, not "connection failed: start your app"', async (_case, header) => {
    for (const args of [
      ['doctor', '--token-route', 'http://127.0.0.1:1/t', '--header', header],
      ['check', 'token-route', 'http://127.0.0.1:1/t', '--header', header],
    ]) {
      const error = await refusal(args);
      expect(error.exitCode).toBe(2);
      expect(error.message).toContain('--header "cookie: …" has a character an HTTP header cannot carry');
      expect(error.message).not.toContain(SECRET.slice(0, 10));
    }
  });
});
