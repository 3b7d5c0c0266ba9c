// What user code throws (a callback, a tokenProvider, a hook) is read by messageOf, messageIn and
// errorType: a value that throws when read still gives a string, never a second throw.
import { describe, expect, test } from 'vitest';
import { createClient, isChannelError } from '../../src/index.js';
import { messageIn, messageOf } from '../../src/shared/message.js';
import { errorType } from '../../src/shared/otel-api.js';

const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};
const hostile: Array<[string, () => unknown]> = [
  [
    'an object whose message getter throws',
    () =>
      Object.defineProperty({}, 'message', {
        get: () => {
          throw new Error('getter-secret');
        },
      }),
  ],
  [
    'an Error whose message getter throws',
    () =>
      Object.defineProperty(new Error('x'), 'message', {
        get: () => {
          throw new Error('getter-secret');
        },
      }),
  ],
  ['a revoked Proxy', revoked],
  [
    'a Proxy whose every trap throws',
    () =>
      new Proxy(
        {},
        {
          get: () => {
            throw new Error('getter-secret');
          },
          getPrototypeOf: () => {
            throw new Error('getter-secret');
          },
        },
      ),
  ],
  ['a null-prototype object', () => Object.create(null) as unknown],
];

describe('a thrown value that throws when read', () => {
  test.each(hostile)('%s: messageOf, messageIn and errorType answer a string', (_name, make) => {
    const value = make();
    expect(typeof messageOf(value)).toBe('string');
    expect(messageOf(value)).not.toMatch(/getter-secret/);
    expect(typeof messageIn({ unprefixed: true }, value)).toBe('string');
    expect(typeof messageIn({ name: true }, value)).toBe('string');
    expect(['_OTHER', 'Error']).toContain(errorType(value));
  });

  test('an Error whose message is not a string: messageOf answers a string that describes it', () => {
    expect(messageOf(Object.assign(new Error('x'), { message: 42 }))).toBe('42');
    expect(messageOf(Object.assign(new Error('x'), { message: { token: 'secret' } }))).toBe('an object');
  });
});

describe('the client, given such a value by user code', () => {
  test.each(hostile)('a tokenProvider that throws %s: the call fails with TokenProviderError and the token:error event', async (_name, make) => {
    const errors: unknown[] = [];
    const client = createClient({ baseUrl: 'https://api.example.com', tokenProvider: () => Promise.reject(make()) });
    client.on('token:error', ({ error }) => errors.push(error));
    const failure = await client.get('/x').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isChannelError(failure) && failure.code).toBe('TOKEN_PROVIDER_ERROR');
    expect((failure as Error).message).toMatch(/^\[channel-sdk\] tokenProvider threw: /);
    expect((failure as Error).message).not.toMatch(/getter-secret/);
    expect(errors).toHaveLength(1);
  });

  test.each(hostile)('isChannelError(%s) is false, not a throw', (_name, make) => {
    expect(isChannelError(make())).toBe(false);
  });
});
