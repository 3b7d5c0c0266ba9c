// What user code throws (a callback, a tokenProvider, a hook) is read by messageOf, messageIn and
// errorType: a value that throws when read still gives a string, never a second throw.
import { describe, expect, test } from 'vitest';
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
