// Every implementation of the webhook primitives, so that one table of vectors and one set
// of properties run against all of them: source and built package, node:crypto and Web Crypto.
import { nodeCrypto } from '../../src/server/crypto/node.js';
import { webCrypto } from '../../src/server/crypto/web.js';
import { serverApi } from '../../src/server/api.js';

type Tools = Pick<ReturnType<typeof serverApi>, 'verifyWebhookSignature' | 'signWebhookBody' | 'parseWebhook' | 'dedupKey'>;

// dist/ is built before the integration tier (npm run verify), which sets CHANNEL_TEST_DIST and runs
// the vectors and properties once more with the built files; imported by computed path, untyped.
const built = async (file: string) => (await import(/* @vite-ignore */ new URL(`../../dist/${file}`, import.meta.url).href)) as Tools;

export async function implementations(): Promise<Array<[string, Tools]>> {
  return [
    ['src node:crypto', serverApi(nodeCrypto)],
    ['src Web Crypto', serverApi(webCrypto)],
    // The built files the `node` and default export conditions point at.
    ...(process.env.CHANNEL_TEST_DIST
      ? ([
          ['dist server-node.js', await built('server-node.js')],
          ['dist server.js (Web Crypto)', await built('server.js')],
        ] as Array<[string, Tools]>)
      : []),
  ];
}

/** The 335-byte logistics body of the project's own test vector. */
export const PROJECT_BODY =
  '{"event":"logistics.updated","logistics":{"order_no":"SO20240601001","shipments":[{"tracking_no":"SF1234567890","express_company":"顺丰速运","express_code":"SF","shipment_status":"in_transit","shipped_at":"2024-06-01T10:00:00+08:00","events":[{"time":"2024-06-01T12:00:00+08:00","status":"in_transit","desc":"快件已发出"}]}]}}';

export const vectors: Array<{ name: string; key: string | Uint8Array; body: string; hex: string }> = [
  { name: 'GitHub docs', key: "It's a Secret to Everybody", body: 'Hello, World!', hex: '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' },
  { name: 'RFC 4231 TC1', key: new Uint8Array(20).fill(0x0b), body: 'Hi There', hex: 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7' },
  { name: 'RFC 4231 TC2', key: 'Jefe', body: 'what do ya want for nothing?', hex: '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843' },
  {
    name: 'RFC 4231 TC6 (key longer than the block)',
    key: new Uint8Array(131).fill(0xaa),
    body: 'Test Using Larger Than Block-Size Key - Hash Key First',
    hex: '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
  },
  {
    name: 'Wikipedia HMAC',
    key: 'key',
    body: 'The quick brown fox jumps over the lazy dog',
    hex: 'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
  },
  { name: 'octokit test', key: 'mysecret', body: '{"foo":"bar"}', hex: '4864d2759938a15468b5df9ade20bf161da9b4f737ea61794142f3484236bda3' },
  {
    name: 'project logistics body (Chinese text)',
    key: 'test_secret_123',
    body: PROJECT_BODY,
    hex: '38b2b7efb5d1b02a1d32eb2cce6cd8d1576d137398a776a0fe22f5732e0dcdfb',
  },
];
