/**
 * Every tokenProvider a reader can copy passes `rejected` on (issue #46 item 1). Without it a
 * token route's cache (createTokenExchange's forceRefreshWindow) may answer a forced refresh with
 * the very token a 401 just rejected, and `channel-sandbox expire` twice within 5 s ends a page in
 * UNAUTHORIZED. The scan covers every document and every example, not a list of known files: the
 * Markdown of the repository (README, CONTRIBUTING, docs/), and every source file under
 * examples/ and demo/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { readerFiles } from './reader-files.js';

/** From `from` (just past `tokenProvider:`), the expression up to the comma or bracket that ends it; strings skipped. */
function expressionAt(text: string, from: number): string {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === "'" || c === '"' || c === '`') {
      const end = text.indexOf(c, i + 1);
      if (end < 0) break;
      i = end;
    } else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) {
      if (--depth < 0) return text.slice(from, i);
    } else if (c === ',' && depth === 0) return text.slice(from, i);
  }
  return text.slice(from);
}

export interface ProviderProblem {
  file: string;
  line: number;
  problem: string;
}

/**
 * Each `tokenProvider: …` (or `tokenProvider = …`) function in `text`, judged: it must take
 * `rejected` from its context and use it again (in the URL, the body, or getToken's options).
 * A provider named by a variable is looked up in the same text.
 */
export function providerProblems(file: string, text: string): ProviderProblem[] {
  const problems: ProviderProblem[] = [];
  for (const match of text.matchAll(/\btokenProvider\s*(?::|=(?![=>]))\s*/g)) {
    let expression = expressionAt(text, match.index + match[0].length).trim();
    const line = text.slice(0, match.index).split('\n').length;
    const named = /^[A-Za-z_$][\w$]*$/.exec(expression)?.[0];
    // A type (an interface member: `tokenProvider: TokenProvider`) is not a provider.
    if (named && /^[A-Z]/.test(named)) continue;
    if (named) {
      const definition = new RegExp(`(?:const|let|var)\\s+${named}\\s*=\\s*|function\\s+${named}\\s*(?=\\()`).exec(text);
      if (!definition) {
        problems.push({ file, line, problem: `tokenProvider: ${named}, defined nowhere in this file: define the provider where it is shown` });
        continue;
      }
      expression = expressionAt(text, definition.index + definition[0].length).trim();
    }
    if (!/^(async\b|function\b|\(|[A-Za-z_$][\w$]*\s*=>)/.test(expression)) continue;
    const parameters = /^(?:async\s+)?(?:function\s*[\w$]*\s*)?(\([^)]*\)|[A-Za-z_$][\w$]*)/.exec(expression)?.[1] ?? '';
    const uses = expression.match(/\brejected\b/g)?.length ?? 0;
    const takes = /\brejected\b/.test(parameters) || /^\(?\s*([A-Za-z_$][\w$]*)\s*\)?$/.test(parameters);
    const passes = /\brejected\b/.test(parameters) ? uses >= 2 : uses >= 1;
    if (!takes || !passes)
      problems.push({
        file,
        line,
        problem: `a tokenProvider that does not pass \`rejected\` on (${expression.split('\n')[0].slice(0, 80)}): take it from the context and send it with the forced refresh (\`?force=1&rejected=\` or getToken's { forceRefresh, rejected })`,
      });
  }
  return problems;
}

test('the scan sees the providers of every document and example (and tells a provider from a type)', () => {
  const files = readerFiles();
  expect(files).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/guide/quick-starts.md', 'examples/quick-starts/wechat/channel.js']));
  expect(files.some((file) => file.startsWith('demo/'))).toBe(true);
  const found = files.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/\btokenProvider\s*:\s*(?:async\b|\()/g)].map(() => file));
  expect(found.length).toBeGreaterThan(20);
  // What it judges, on made-up providers.
  const judge = (code: string) => providerProblems('x.ts', code).map((p) => p.problem.slice(0, 50));
  expect(judge("createClient({ tokenProvider: async ({ forceRefresh }) => get('/t' + (forceRefresh ? '?force=1' : '')), baseUrl })")).toHaveLength(1);
  expect(judge('createClient({ tokenProvider: ({ forceRefresh, rejected }) => ask(forceRefresh) })')).toHaveLength(1);
  expect(judge("createClient({ tokenProvider: ({ forceRefresh, rejected }) => ask('?force=1&rejected=' + rejected) })")).toEqual([]);
  expect(judge('createClient({ tokenProvider: (ctx) => exchange.getToken(u, ctx) })')).toHaveLength(1);
  expect(judge('createClient({ tokenProvider: (ctx) => exchange.getToken(u, { rejected: ctx.rejected }) })')).toEqual([]);
  expect(judge("const p = ({ forceRefresh }) => 'x';\ncreateClient({ tokenProvider: p })")).toHaveLength(1);
  expect(judge('interface O { tokenProvider: TokenProvider }')).toEqual([]);
});

test('every tokenProvider in every document and example passes `rejected` on to the token route or the exchange', () => {
  const problems = readerFiles().flatMap((file) => providerProblems(file, readFileSync(file, 'utf8')));
  expect(problems.map((p) => `${p.file}:${p.line}: ${p.problem}`)).toEqual([]);
});

test("every tokenProvider in the package's own doc comments (what an editor shows from the .d.ts) passes `rejected` on", () => {
  const sources = (readdirSync('src', { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => join('src', f));
  const shown = sources.filter((file) => /\btokenProvider\s*:\s*(?:async\b|\()/.test(readFileSync(file, 'utf8')));
  expect(shown).toEqual(expect.arrayContaining(['src/index.ts', 'src/miniprogram.ts']));
  const problems = sources.flatMap((file) => providerProblems(file, readFileSync(file, 'utf8')));
  expect(problems.map((p) => `${p.file}:${p.line}: ${p.problem}`)).toEqual([]);
});
