/**
 * The inbox's prefix on a Redis Cluster (issue #43 item 6): every key of one inbox must fall in
 * one hash slot, or the Cluster refuses its scripts (CROSSSLOT) and every push is answered 503.
 * A prefix that would break so is refused at construction. On a real 3-master Cluster:
 * test/cluster/inbox.test.ts.
 */
import * as fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ConfigError } from '../../../../src/server-node.js';
import { inboxSettings } from '../../../../src/server/webhooks/inbox/inbox-options.js';
import { sized } from '../../../helpers/tier.js';

// The Cluster's key -> slot, as the cluster specification gives it: CRC16 (XMODEM) of the hash
// tag (the text between the first '{' and the first '}' after it, when not empty), else of the key.
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}
function slotOf(key: string): number {
  const bytes = new TextEncoder().encode(key);
  const open = bytes.indexOf(0x7b);
  const close = open < 0 ? -1 : bytes.indexOf(0x7d, open + 1);
  return crc16(close > open + 1 ? bytes.subarray(open + 1, close) : bytes) % 16384;
}

test("crc16 matches the specification's check value, and the Cluster's own slot for a tagged key", () => {
  expect(crc16(new TextEncoder().encode('123456789'))).toBe(0x31c3);
  expect(slotOf('{user1000}.following')).toBe(slotOf('{user1000}.followers'));
  expect(slotOf('foo{}{bar}')).toBe(slotOf('foo{}{bar}'));
});

/**
 * Every key the inbox may use, with an order number that may hold braces too: those a script is
 * given (the client puts `keyPrefix` before them) and those a script builds from the tag.
 */
function keysOf(prefix: string, order: string, keyPrefix = ''): string[] {
  const { keys, tag } = inboxSettings({ prefix }, keyPrefix);
  const named = Object.values(keys).filter((key): key is string => typeof key === 'string');
  return [...[...named, keys.push('a'.repeat(64))].map((key) => keyPrefix + key), tag + ':order:' + order, tag + ':latest:' + order];
}

test('an ioredis keyPrefix comes before the keys a script builds as well as those it is given; one that empties the hash tag is refused', () => {
  const keys = keysOf('myapp:', 'SO-1', 'app-a:');
  expect(keys.every((key) => key.startsWith('app-a:{myapp:inbox}:'))).toBe(true);
  expect(() => inboxSettings({}, '{}')).toThrow(/keyPrefix "\{\}" gives keys such as "\{\}\{channel-sdk:inbox\}:stream" whose hash tag is empty/);
});

test.each([
  [
    '{}',
    /prefix "\{\}" gives keys such as "\{\}inbox:stream" that hold an empty hash tag "\{\}": on a Redis Cluster the inbox's keys would then fall in different hash slots and every push would be answered 503 \(CROSSSLOT\)/,
  ],
  ['a{', /prefix "a\{" gives keys such as "a\{inbox:stream" that hold a "\{" with no "\}" after it/],
  ['x}{y:', /prefix "x\}\{y:" gives keys such as "x\}\{y:inbox:stream" that hold a "\{" with no "\}" after it/],
  ['{}{app}:', /that hold an empty hash tag/],
  ['}', /prefix "\}" gives keys such as "\{\}inbox\}:stream" that hold an empty hash tag/],
])('refused: %j', (prefix, message) => {
  expect(() => inboxSettings({ prefix })).toThrow(ConfigError);
  expect(() => inboxSettings({ prefix })).toThrow(message);
  expect(() => inboxSettings({ prefix })).toThrow(/Use a prefix without braces \("myapp:"\) or one with a hash tag that holds text \("\{myapp\}:"\)/);
});

test.each(['', 'myapp:', '{myapp}:', 'a}b:', '{t}{u}:', 'x{y}z', '租户:'])('accepted, every key in one slot: %j', (prefix) => {
  const slots = new Set(keysOf(prefix, 'SO-{1}').map(slotOf));
  expect(slots.size).toBe(1);
});

describe('any prefix', () => {
  test('is refused, or puts every key of the inbox (whatever the order numbers) in one slot', () => {
    const braces = fc.string({ unit: fc.constantFrom('{', '}', 'a', ':', '-') });
    fc.assert(
      fc.property(fc.oneof(braces, fc.string()), braces, fc.oneof(fc.constant(''), braces), (prefix, order, keyPrefix) => {
        let keys: string[] | ConfigError;
        try {
          keys = keysOf(prefix, order, keyPrefix);
        } catch (error) {
          keys = error as ConfigError;
        }
        // Refused with a ConfigError, or every key in one slot.
        expect(keys instanceof ConfigError || new Set(keys.map(slotOf)).size === 1).toBe(true);
      }),
      { numRuns: sized(2000, 200) },
    );
  });
});
