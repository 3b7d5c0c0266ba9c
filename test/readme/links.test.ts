/**
 * Every relative link in README.md, CONTRIBUTING.md and docs/ leads somewhere: to a file of the
 * repository, and, with a `#fragment`, to a heading of that file (GitHub's anchors). Moving or
 * renaming a document or a heading fails here with the link to fix. docs/README.md, the index
 * of docs/, names every file there.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { expect, test } from 'vitest';

const documents = (): string[] => [
  'README.md',
  'CONTRIBUTING.md',
  ...(readdirSync('docs', { recursive: true }) as string[]).filter((f) => f.endsWith('.md')).map((f) => join('docs', f)),
];

/** The Markdown outside fenced code blocks and inline code, where links and headings are. */
function prose(text: string): string {
  let fenced = false;
  return text
    .split('\n')
    .map((line) => {
      if (line.startsWith('```')) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

/** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of prose(readFileSync(file, 'utf8')).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

/** The broken relative links of one Markdown file, as `file: target (why)`. */
function brokenLinks(file: string): string[] {
  const text = prose(readFileSync(file, 'utf8')).replace(/`[^`\n]*`/g, '');
  const targets = [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g), ...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map(
    (m) => m[1],
  );
  const broken: string[] = [];
  for (const target of targets) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [path, fragment] = target.split('#', 2) as [string, string | undefined];
    const resolved = path === '' ? file : join(dirname(file), decodeURI(path));
    if (relative('.', resolved).startsWith('..')) broken.push(`${file}: ${target} (outside the repository)`);
    else if (!existsSync(resolved)) broken.push(`${file}: ${target} (no such file)`);
    else if (fragment && resolved.endsWith('.md') && !anchors(resolved).has(decodeURIComponent(fragment))) broken.push(`${file}: ${target} (no such heading)`);
    else if (fragment && statSync(resolved).isDirectory()) broken.push(`${file}: ${target} (a folder has no headings)`);
  }
  return broken;
}

test('every relative link in README.md, CONTRIBUTING.md and docs/ points at an existing file and heading', () => {
  const files = documents();
  expect(files.length).toBeGreaterThan(10);
  expect(files.flatMap(brokenLinks)).toEqual([]);
});

test('every docs/ path named in the sources, scripts, tests, demo and documents exists (links or not)', () => {
  const roots = ['README.md', 'CONTRIBUTING.md', 'package.json', '.ci', 'docs', 'src', 'scripts', 'test', 'demo', 'examples'];
  const files = roots.flatMap((root) =>
    statSync(root).isDirectory()
      ? (readdirSync(root, { recursive: true }) as string[]).map((f) => join(root, f)).filter((f) => !f.includes('node_modules') && statSync(f).isFile())
      : [root],
  );
  const missing = new Set<string>();
  for (const file of files.filter((f) => /\.(md|ts|mts|mjs|cjs|js|json|html)$|^\.ci[/\\]/.test(f))) {
    for (const [path] of readFileSync(file, 'utf8').matchAll(/(?<![\w.-])docs\/[\w/.-]+\.(?:md|jpg|png)\b/g)) {
      if (!existsSync(path)) missing.add(`${file}: ${path}`);
    }
  }
  expect([...missing]).toEqual([]);
});

test('docs/README.md names every file under docs/ (the index says what each is for)', () => {
  const index = readFileSync('docs/README.md', 'utf8');
  const files = (readdirSync('docs', { recursive: true }) as string[]).filter((f) => f !== 'README.md' && statSync(join('docs', f)).isFile());
  expect(files.length).toBeGreaterThan(5);
  expect(files.filter((f) => !index.includes(`(${f.split('\\').join('/')})`) && !index.includes('`' + f + '`'))).toEqual([]);
});

test('the README links to every user guide (docs/guide/)', () => {
  const readme = readFileSync('README.md', 'utf8');
  expect(readdirSync('docs/guide').filter((f) => f.endsWith('.md') && !readme.includes(`](docs/guide/${f}`))).toEqual([]);
});
