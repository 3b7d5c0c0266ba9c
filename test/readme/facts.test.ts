/**
 * The README's facts, checked against what they describe (issue #23 item 5): the install size
 * against the package npm would publish, the bundle sizes against `npm run size`, the ratios
 * against docs/maintainers/performance.md (the benchmarks' own tables), every error message it quotes
 * against the message the client produces, and its prose against a colon left hanging before
 * a heading. A figure that drifts fails here with the measured value to write instead.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { createClient } from '../../src/index.js';

const readme = readFileSync('README.md', 'utf8');
const exec = promisify(execFile);
/** The text of a `## title` section, line breaks folded into spaces as Markdown renders them. */
function section(title: string): string {
  const start = readme.indexOf('\n## ' + title + '\n');
  expect(start, `README section "## ${title}"`).toBeGreaterThan(-1);
  const end = readme.indexOf('\n## ', start + 4);
  return readme.slice(start, end === -1 ? undefined : end).replace(/\s+/g, ' ');
}
/** The figures a pattern captures in a README section; fails when the sentence is gone. */
function figures(title: string, pattern: RegExp): string[] {
  const match = pattern.exec(section(title));
  expect(match, `README "## ${title}" no longer says ${pattern}: update this test with the sentence`).not.toBeNull();
  return match!.slice(1);
}
const number = (text: string) => Number(text.replace(/,/g, ''));

/** The first Markdown table after the line containing `heading`, as one object per row. */
function table(doc: string, heading: string): Array<Record<string, string>> {
  const lines = doc.split('\n');
  const at = lines.findIndex((line) => line.includes(heading));
  expect(at, `a table under "${heading}"`).toBeGreaterThan(-1);
  const first = lines[at].startsWith('|') ? at : lines.findIndex((line, i) => i > at && line.startsWith('|'));
  const rows: string[][] = [];
  for (let i = first; lines[i]?.startsWith('|'); i++)
    rows.push(
      lines[i]
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  const [header, , ...body] = rows;
  return body.map((cells) => Object.fromEntries(header.map((name, i) => [name, cells[i]])));
}

describe('sizes', () => {
  test('"1.8 MB unpacked, a 0.5 MB download" (Install) is the package npm publishes, within 0.1 MB', async () => {
    // What `npm publish` would upload from the current build: the files, their total, the tarball.
    const { stdout } = await exec('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { maxBuffer: 16 * 1024 * 1024 });
    const [{ size, unpackedSize }] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ size: number; unpackedSize: number }>;
    const measured = { unpacked: +(unpackedSize / 1e6).toFixed(2), download: +(size / 1e6).toFixed(2) };
    const unpacked = Number(figures('Install', /([\d.]+) MB (?:unpacked|on disk)/)[0]);
    expect(Math.abs(unpacked - measured.unpacked), `README says ${unpacked} MB, npm counts ${measured.unpacked} MB unpacked`).toBeLessThanOrEqual(0.1);
    const download = Number(figures('Install', /a ([\d.]+) MB download/)[0]);
    expect(Math.abs(download - measured.download), `README says a ${download} MB download, npm packs ${measured.download} MB`).toBeLessThanOrEqual(0.1);
    const compatibility = readFileSync('docs/guide/compatibility.md', 'utf8').replace(/\s+/g, ' ');
    const [doc] = /([\d.]+) MB unpacked/.exec(compatibility)?.slice(1) ?? ['(sentence missing)'];
    expect(`docs/guide/compatibility.md: ${doc} MB unpacked`).toBe(`docs/guide/compatibility.md: ${unpacked} MB unpacked`);
  });

  test('the min+gz figures of "Performance and size" and docs/maintainers/size.md are what `npm run size` measures', async () => {
    const { stdout } = await exec(process.execPath, ['scripts/size.mjs'], { maxBuffer: 16 * 1024 * 1024 });
    const gz = (name: string) => {
      const row = stdout.split('\n').find((line) => line.startsWith('| ' + name));
      expect(row, `npm run size has a row "${name}"`).toBeDefined();
      return Number(/\| ([\d.]+) KB \| ([\d.]+) KB \|/.exec(row!)![2]);
    };
    const measured = { browser: gz('channel-sdk (browser entry, all exports)'), ky: gz('ky alone'), wechat: gz('miniprogram_dist/index.js') };
    const [browser, ky, wechat] = figures(
      'Performance and size',
      /Min\+gz, all-in: ([\d.]+) KB browser entry \(([\d.]+) KB of it ky\), ([\d.]+) KB WeChat bundle/,
    ).map(Number);
    for (const [what, said, real] of [
      ['browser entry', browser, measured.browser],
      ['ky', ky, measured.ky],
      ['WeChat bundle', wechat, measured.wechat],
    ] as const) {
      expect(Math.abs(said - real), `README: ${said} KB ${what}; npm run size: ${real} KB`).toBeLessThanOrEqual(0.1);
    }
    const sizes = table(readFileSync('docs/maintainers/size.md', 'utf8'), '| bundle | min | min+gz | budget |');
    const doc = (prefix: string) => Number(sizes.find((row) => row.bundle.startsWith(prefix))?.['min+gz'].replace(' KB', ''));
    expect({ browser: doc('`channel-sdk` (browser entry'), ky: doc('of which ky'), wechat: doc('`miniprogram_dist/index.js`') }).toEqual({
      browser: expect.closeTo(measured.browser, 1) as number,
      ky: expect.closeTo(measured.ky, 1) as number,
      wechat: expect.closeTo(measured.wechat, 1) as number,
    });
  }, 60_000);
});

test('the ratios of "Performance and size" are the ones docs/maintainers/performance.md measured', () => {
  const performance = readFileSync('docs/maintainers/performance.md', 'utf8');
  const sequential = table(performance, '20,000 sequential GETs');
  const row = (rows: Array<Record<string, string>>, contender: string) => rows.find((r) => (r.contender ?? r.receiver) === contender)!;
  const hooks = sequential.filter((r) => r.contender.startsWith('ky hook'));
  const [perRequest, cheapestHook] = figures('Performance and size', /Per request ([\d.]+)× plain ky \(the ky README's cheapest refresh hook: ([\d.]+)×\)/);
  expect({ perRequest, cheapestHook }).toEqual({
    perRequest: row(sequential, 'channel-sdk')['× plain ky'],
    cheapestHook: hooks.map((r) => r['× plain ky']).toSorted()[0],
  });

  const storm = table(performance, 'Storm: 500 GET + 500 POST at once on an expired token');
  const [fewest, most] = figures('Performance and size', /costs one provider call with every POST body intact \(the hook patterns: ([\d,]+) to ([\d,]+)\)/).map(
    number,
  );
  expect([row(storm, 'channel-sdk')['provider calls'], row(storm, 'channel-sdk')['POST bodies intact']]).toEqual(['1', '500 / 500']);
  const hookCalls = storm.filter((r) => r.contender.startsWith('ky hook')).map((r) => number(r['provider calls']));
  expect([fewest, most]).toEqual([Math.min(...hookCalls), Math.max(...hookCalls)]);

  const ratio = '× floor (median of per-round ratios)';
  const small = table(performance, '**Signed push, ~1 KB**');
  const large = table(performance, '**Signed push, ~100 KB');
  const webhooks = figures(
    'Performance and size',
    /Webhooks on node:http: ([\d.]+)× a bare receiver at 1 KB, ([\d.]+)× at 100 KB \(@octokit\/webhooks ([\d.]+)×, ([\d.]+)×\)/,
  );
  expect(webhooks).toEqual([
    row(small, 'channel-sdk')[ratio],
    row(large, 'channel-sdk')[ratio],
    row(small, '@octokit/webhooks')[ratio],
    row(large, '@octokit/webhooks')[ratio],
  ]);
});

/**
 * The messages the README quotes: in "The tokenProvider contract" and "Options", each code
 * span after an arrow (`a wrong value` → `what the message says`), or alone in parentheses.
 */
function quotes(title: string): string[] {
  const text = section(title);
  const found: string[] = [];
  for (const m of text.matchAll(/(`+)(.+?)\1(?!`)/g)) {
    const before = text.slice(0, m.index).trimEnd();
    const after = text.slice(m.index + m[0].length);
    // CommonMark drops one space each side of a code span that has both (``a `b` c``).
    const content = / .* /.test(m[2]) && m[1].length > 1 ? m[2].slice(1, -1) : m[2];
    if (before.endsWith('→') || (before.endsWith('(') && after.startsWith(')'))) found.push(content);
  }
  return found;
}

/** The messages the client gives for the wrong values and options the README quotes from. */
async function messages(): Promise<string[]> {
  const baseUrl = 'https://channel.example.com';
  const fetch = () => Promise.reject(new Error('no request is sent in this test'));
  const wrongTokens: unknown[] = [{ data: { access_token: 'a.b.c' } }, { access_token: 'a.b.c' }, {}, undefined, null, 42, '', 'Bearer a.b.c', 'sess_4f1c2a'];
  const out: string[] = [];
  for (const value of wrongTokens) {
    const client = createClient({ baseUrl, fetch, tokenProvider: async () => value as string });
    out.push(
      await client.get('/orders').then(
        () => 'resolved',
        (error: Error) => error.message,
      ),
    );
  }
  const fail = (fn: () => unknown) =>
    Promise.resolve()
      .then(fn)
      .then(
        () => 'accepted',
        (error: Error) => error.message,
      );
  out.push(await fail(() => createClient({ baseUrl, fetch, tokenProvider: async () => 'a.b.c', tokenprovider: 1 } as never)));
  const client = createClient({ baseUrl, fetch, tokenProvider: async () => 'a.b.c' });
  out.push(await fail(() => client.post('/orders', { data: {} } as never)));
  out.push(await fail(() => client.get('/orders', { params: {} } as never)));
  return out;
}

test('every message "The tokenProvider contract" and "Options" quote is one the client gives, word for word', async () => {
  const quoted = [...quotes('The tokenProvider contract'), ...quotes('Options')];
  // The sentences this reads: it must keep finding them.
  expect(quoted.length).toBeGreaterThanOrEqual(7);
  const given = await messages();
  for (const message of given) expect(message).toMatch(/^\[channel-sdk\] /);
  expect(quoted.filter((quote) => !given.some((message) => message.includes(quote)))).toEqual([]);
});

test('no paragraph ends in a colon right before a heading (README.md, CONTRIBUTING.md, docs/)', () => {
  const documents = [
    'README.md',
    'CONTRIBUTING.md',
    ...(readdirSync('docs', { recursive: true }) as string[]).filter((f) => f.endsWith('.md')).map((f) => 'docs/' + f),
  ];
  const hanging: string[] = [];
  for (const file of documents) {
    let fenced = false;
    let previous = '';
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (line.startsWith('```')) fenced = !fenced;
        if (!fenced && /^#{1,6} /.test(line) && previous.trimEnd().endsWith(':')) hanging.push(`${file}:${i}: "…${previous.slice(-50)}" then "${line}"`);
        if (line.trim()) previous = fenced || line.startsWith('```') ? '' : line;
      });
  }
  expect(hanging).toEqual([]);
});

test('the defaults of the Options table are the ones the option types document (@default)', () => {
  const typings = ['src/core/types.ts', 'src/miniprogram.ts'].map((file) => readFileSync(file, 'utf8')).join('\n');
  const documented = (option: string) => {
    // `/** … @default X */` (one line or the last line of the comment) right before `option?:`.
    const m = new RegExp(`@default ([^\\n*]+?)\\s*\\*/\\s*(?:readonly )?${option}\\?:`).exec(typings);
    expect(m, `a @default for ${option} in the typings`).not.toBeNull();
    return m![1];
  };
  const rows = table(readme, '| option | default | meaning |');
  const said = (option: string) => rows.find((r) => r.option.split(/,\s*/).includes('`' + option + '`'))!.default;
  expect({ timeout: said('timeout'), tokenTimeout: said('tokenTimeout'), refreshLeeway: said('refreshLeeway'), retry: said('retry') }).toEqual({
    timeout: '`' + documented('timeout') + '`',
    tokenTimeout: '`' + documented('tokenTimeout') + '`',
    refreshLeeway: '`' + documented('refreshLeeway') + '`',
    retry: '`' + documented('retry') + '`',
  });
  expect(said('concurrency')).toBe('detected, `' + documented('concurrency') + '`');
  expect(said('offline')).toBe('`' + documented('offline') + '`, `' + documented('retryBudget') + '`');
});
