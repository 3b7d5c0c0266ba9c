// The docs show the recipes verbatim: every block marked `<!-- file: path -->` is that file,
// byte for byte, and every recipe in examples/ is shown.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const docs = ['docs/readme-drafts/webhooks.md', 'docs/webhooks.md'];
const recipes = [
  'examples/channel.ts',
  'examples/express.ts',
  'examples/fastify.ts',
  'examples/koa.ts',
  'examples/hono.ts',
  'examples/nextjs/app/webhooks/channel/route.ts',
  'examples/nextjs/app/channel-token/route.ts',
  'examples/nextjs/pages/api/webhooks/channel.ts',
  'examples/nextjs/pages/api/channel-token.ts',
];

const shown = (doc: string) => [...readFileSync(resolve(root, doc), 'utf8').matchAll(/<!-- file: (\S+) -->\n```ts\n([\s\S]*?)```\n/g)].map(([, file, code]) => ({ file, code }));

test.each(docs)('%s shows example files verbatim', (doc) => {
  for (const { file, code } of shown(doc)) expect({ file, code }).toEqual({ file, code: readFileSync(resolve(root, file), 'utf8') });
});

test('the README draft shows every recipe', () => {
  expect(shown(docs[0]).map(({ file }) => file)).toEqual(recipes);
});
