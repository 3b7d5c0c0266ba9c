/** The sandbox's small parts on their own: nonce store, event log, JWT checks, loopback test. */
import { describe, expect, test } from 'vitest';
import { createEventLog } from '../../../src/testing/sandbox/event-log.js';
import { isLoopback } from '../../../src/testing/http-io.js';
import { createJwtSigner } from '../../../src/testing/sandbox/sandbox-jwt.js';
import { createNonceStore } from '../../../src/testing/sandbox/nonce-store.js';

describe('nonce store', () => {
  test('refuses a nonce within its time, forgets it after, and holds only the window, not the history', () => {
    const store = createNonceStore(600);
    expect(store.add('a', 1000)).toBe(true);
    expect(store.add('a', 1599)).toBe(false);
    expect(store.add('a', 1600)).toBe(true);
    let added = 0;
    for (let i = 0; i < 50_000; i++) added += store.add('n' + i, 3000 + Math.floor(i / 100)) ? 1 : 0;
    expect(added).toBe(50_000);
    expect(store.size).toBe(50_000); // 'a' (kept until 2200) is gone
    expect(store.add('n49999', 3499)).toBe(false);
    expect(store.add('late', 3000 + 600 + 250)).toBe(true); // everything stamped at second 3250 or before is gone
    expect(store.size).toBe(249 * 100 + 1);
    // A clock that goes back does not resurrect a forgotten nonce as seen, nor forget a held one.
    expect(store.add('n49999', 3300)).toBe(false);
  });
});

describe('event log', () => {
  test('keeps the last 1,000 events for a late subscriber, in order, stamped by its clock', () => {
    let t = 0;
    const log = createEventLog(() => ++t);
    for (let i = 0; i < 1005; i++) log.emit({ type: 'control', action: 'ttl', seconds: i + 1 });
    expect(log.since(0).map((e) => e.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 6));
    expect(log.since(1003)).toMatchObject([
      { seq: 1004, at: 1004, seconds: 1004 },
      { seq: 1005, at: 1005, seconds: 1005 },
    ]);
    expect(log.since(1005)).toEqual([]);
  });
});

describe('JWT signer', () => {
  const claims = (jti: string, exp = 2000) => ({ sub: 'u1', iss: 'channel-sandbox', iat: 1000, exp, jti });

  test('a token checked once is recognised by its text, and still expires', () => {
    const jwt = createJwtSigner('channel-sandbox');
    const token = jwt.sign(claims('1'));
    expect(jwt.verify(token, 1500)).toEqual({ claims: claims('1') });
    expect(jwt.verify(token, 1999)).toEqual({ claims: claims('1') });
    expect(jwt.verify(token, 2000)).toEqual({ reason: 'token expired' });
  });

  test('a variant of a remembered token is checked, and refused', () => {
    const jwt = createJwtSigner('channel-sandbox');
    const token = jwt.sign(claims('1'));
    jwt.verify(token, 1500);
    const [h, , s] = token.split('.');
    const admin = Buffer.from(JSON.stringify({ ...claims('1'), sub: 'admin' })).toString('base64url');
    expect(jwt.verify(`${h}.${admin}.${s}`, 1500)).toEqual({ reason: 'signature invalid (tampered or foreign token)' });
    expect(jwt.verify(token + 'A', 1500)).toEqual({ reason: 'signature invalid (tampered or foreign token)' });
    expect(jwt.verify(token.slice(0, -1), 1500)).toEqual({ reason: 'signature invalid (tampered or foreign token)' });
    expect(createJwtSigner('channel-sandbox').verify(token, 1500)).toEqual({ reason: 'signature invalid (tampered or foreign token)' }); // another key
  });

  test('remembers at most 10,000 tokens: an old one is checked again, and still passes', () => {
    const jwt = createJwtSigner('channel-sandbox');
    const first = jwt.sign(claims('0'));
    jwt.verify(first, 1500);
    for (let i = 1; i <= 10_000; i++) jwt.verify(jwt.sign(claims(String(i))), 1500);
    expect(jwt.verify(first, 1500)).toEqual({ claims: claims('0') });
  });
});

describe('loopback', () => {
  test('only loopback clients unless controlApi is any', () => {
    expect(['127.0.0.1', '127.3.4.5', '::1', '::ffff:127.0.0.1'].map(isLoopback)).toEqual([true, true, true, true]);
    expect(['10.0.0.2', '::ffff:192.168.1.2', 'fe80::1', '', undefined].map(isLoopback)).toEqual([false, false, false, false, false]);
  });
});
