import { expect, test } from 'vitest';
import { ConfigError, createClient } from '../../src/index.js';

const ok = { baseUrl: 'https://api.example.com', tokenProvider: () => 'a.b.c' };

test.each([
  ['no options', undefined, /needs an options object/],
  ['missing baseUrl', { tokenProvider: ok.tokenProvider }, /baseUrl must be an absolute http\(s\) URL.*got undefined/],
  ['relative baseUrl', { ...ok, baseUrl: '/api' }, /baseUrl must be an absolute http\(s\) URL.*got "\/api"/],
  ['baseUrl with a query', { ...ok, baseUrl: 'https://a.example/?x=1' }, /without query or fragment/],
  ['tokenProvider missing', { baseUrl: ok.baseUrl }, /tokenProvider must be a function/],
  ['tokenProvider a string', { ...ok, tokenProvider: 'eyJ...' }, /tokenProvider must be a function.*got a long string|got "eyJ\.\.\."/],
  ['a misspelt option', { ...ok, tokenprovider: 1 }, /unknown option "tokenprovider"; did you mean "tokenProvider"\?/],
  ['an unknown option', { ...ok, cache: true }, /unknown option "cache"; known: baseUrl, tokenProvider/],
  ['a near miss', { ...ok, retries: 3 }, /unknown option "retries"; did you mean "retry"\?/],
  ['timeout 0', { ...ok, timeout: 0 }, /timeout must be a number of milliseconds from 1/],
  ['tokenTimeout a string', { ...ok, tokenTimeout: '10s' }, /tokenTimeout must be a number of milliseconds.*got "10s"/],
  ['negative refreshLeeway', { ...ok, refreshLeeway: -1 }, /refreshLeeway must be a number of seconds >= 0/],
  ['Authorization header', { ...ok, headers: { Authorization: 'Bearer x' } }, /headers\.Authorization is set by channel-sdk from tokenProvider; remove it/],
  ['a non-string header', { ...ok, headers: { 'x-n': 1 } }, /headers\.x-n must be a string; got 1/],
  ['retry not a number or object', { ...ok, retry: 'yes' }, /retry must be a number \(the limit\) or \{ limit/],
  ['unknown retry key', { ...ok, retry: { limits: 2 } }, /unknown retry option "limits"; did you mean "limit"\?/],
  ['unknown retry key, no near one', { ...ok, retry: { backoff: 2 } }, /unknown retry option "backoff"; known: limit, methods/],
  ['fractional retry limit', { ...ok, retry: 1.5 }, /retry\.limit must be a whole number from 0 to 100; got 1\.5/],
])('createClient with %s -> ConfigError that says what to pass', (_label, options, message) => {
  const error = (() => {
    try {
      createClient(options as never);
    } catch (e) {
      return e;
    }
  })();
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as ConfigError).code).toBe('CONFIG_ERROR');
  expect((error as Error).message).toMatch(message);
});

test('request options are checked too, before anything is sent', async () => {
  let provided = 0;
  const client = createClient({ ...ok, tokenProvider: () => (provided++, 'a.b.c') });
  await expect(client.get('https://evil.example/steal')).rejects.toThrow(/refusing to send the token to https:\/\/evil\.example/);
  await expect(client.get('/x', { headers: { authorization: 'x' } })).rejects.toThrow(ConfigError);
  await expect(client.post('/x', { json: {}, body: '{}' })).rejects.toThrow(/either json or body/);
  await expect(client.post('/x', { body: {} as never })).rejects.toThrow(/body must be a string/);
  await expect(client.get('/x', { timeout: -5 })).rejects.toThrow(/timeout must be a number/);
  expect(provided).toBe(0);
});

test('a full URL on the service origin is accepted', async () => {
  const client = createClient({ ...ok, tokenProvider: () => Promise.reject(new Error('stop here')) });
  await expect(client.get('https://api.example.com/open/x')).rejects.toThrow(/tokenProvider threw: stop here/);
});
