// README code blocks and the files they come from (issue #12: every block is a test).
//   <!-- example: examples/x.ts -->   the block below is that file, verbatim; a test runs the file
//   <!-- check -->                    type-checked only (it needs the reader's app)
//   <!-- check: client -->            same, with `client` (a channel-sdk Client) declared
//   <!-- try[: examples/x.ts …] -->    (sh) the commands a reader runs to try those examples, in the
//                                     folder the first `try` block sets up; `npm run test:examples`
//                                     runs them in fresh projects (test/readme/fresh-projects.mjs)
// `npm run readme` copies every example file into its block (README.md and the guides in `documents`);
// test/readme and test/server/http/recipe-docs check they match.
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const fence = /^(<!-- (example|check|try)(?::\s*([^>]*?))? -->\n)?```(\w*)\n([\s\S]*?)^```$/gm;

/** Every fenced block with its marker, language, code and line. */
export function readmeBlocks(text) {
  const blocks = [];
  for (const m of text.matchAll(fence)) {
    const line = text.slice(0, m.index).split('\n').length + (m[1] ? 1 : 0);
    blocks.push({ marker: m[2], argument: m[3]?.trim(), lang: m[4], code: m[5], line, start: m.index, length: m[0].length });
  }
  return blocks;
}

/** The README with each example block replaced by its file. */
export function syncExamples(text) {
  return text.replace(fence, (all, marker, kind, argument, lang) =>
    kind === 'example' ? `${marker}\`\`\`${lang}\n${readFileSync(argument.trim(), 'utf8')}\`\`\`` : all,
  );
}

/** The documents whose example blocks are kept in sync with their files. */
export const documents = [
  'README.md',
  'docs/guide/webhooks.md',
  'docs/guide/files.md',
  'docs/guide/token-cache.md',
  'docs/guide/quick-starts.md',
  'docs/guide/testing.md',
  'docs/guide/request-stacks.md',
  'docs/guide/telemetry.md',
];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const file of documents) {
    const before = readFileSync(file, 'utf8');
    const after = syncExamples(before);
    writeFileSync(file, after);
    console.log(before === after ? `${file}: examples already in sync` : `${file}: example blocks updated from examples/`);
  }
}
