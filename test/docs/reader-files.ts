// The files a reader copies from, for the document checks of test/docs/.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const CODE = /\.(ts|tsx|js|jsx|mjs|cjs|vue)$/;

/** The files a reader copies from: every Markdown file but node_modules', every source under examples/ and demo/. */
export function readerFiles(root = '.'): string[] {
  const walk = (dir: string, keep: (name: string) => boolean): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) return [];
      const path = dir === '.' ? entry.name : join(dir, entry.name);
      if (entry.isDirectory()) return walk(path, keep);
      return keep(entry.name) ? [path] : [];
    });
  const markdown = readdirSync(root).filter((name) => name.endsWith('.md'));
  return [
    ...markdown,
    ...walk('docs', (name) => name.endsWith('.md')),
    ...walk('examples', (name) => CODE.test(name)),
    ...walk('demo', (name) => CODE.test(name)),
  ];
}
