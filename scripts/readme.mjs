// README code blocks and the files they come from (issue #12: every block is a test).
//   <!-- example: examples/x.ts -->   the block below is that file, verbatim; a test runs the file
//   <!-- check -->                    type-checked only (it needs the reader's app)
//   <!-- check: client -->            same, with `client` (a channel-sdk Client) declared
// `npm run readme` copies every example file into its block; test/readme checks they match.
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const fence = /^(<!-- (example|check)(?::\s*([^>]*?))? -->\n)?```(\w*)\n([\s\S]*?)^```$/gm;

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

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const before = readFileSync('README.md', 'utf8');
  const after = syncExamples(before);
  writeFileSync('README.md', after);
  console.log(before === after ? 'README.md: examples already in sync' : 'README.md: example blocks updated from examples/');
}
