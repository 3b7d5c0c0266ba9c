/**
 * A first mistake: the token exchange imported into a page (channel-sdk/server resolves in a
 * browser bundle, to its Web Crypto build). The spec keeps the secret key off the page: refused,
 * with what to do instead; a test under jsdom or happy-dom (Node with a document) still runs it.
 */
import { afterEach, expect, test, vi } from 'vitest';
import { ConfigError, createTokenExchange } from '../../../src/server.js';
import { inWebPage } from '../../../src/server/tokens/exchange-options.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

test('createTokenExchange in a web page is a ConfigError that points to createClient and the token route, without the key', () => {
  const realProcess = process;
  vi.stubGlobal('document', {});
  vi.stubGlobal('process', { ...realProcess, versions: {} }); // a page: no Node (webpack 4's shim has empty versions)
  let error: unknown;
  try {
    createTokenExchange({ baseUrl: 'https://channel.example.com', accessKey: 'ak_live', secretKey: 'sk_live_secret' });
  } catch (e) {
    error = e;
  } finally {
    vi.stubGlobal('process', realProcess);
  }
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).toMatch(/runs on your backend only: it needs your secret key.*createClient from 'channel-sdk'.*token route/);
  expect((error as Error).message).not.toMatch(/sk_live|ak_live/);
});

test.each([
  ['a page', { document: {} }, true],
  ['a page whose bundler shims process without Node', { document: {}, process: { versions: {} } }, true],
  ['Node under jsdom or happy-dom', { document: {}, process: { versions: { node: '22.0.0' } } }, false],
  ['Node, Deno, Bun, an edge worker', { process: { versions: { node: '22.0.0' } } }, false],
  ['an edge worker without process', {}, false],
])('inWebPage: %s', (_, globals, expected) => {
  expect(inWebPage(globals)).toBe(expected);
});

test('createTokenExchange under Node with a document (a jsdom test) still works', () => {
  vi.stubGlobal('document', {});
  expect(() => createTokenExchange({ baseUrl: 'https://channel.example.com', accessKey: 'ak', secretKey: 'sk' })).not.toThrow();
});
