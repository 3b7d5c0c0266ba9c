// A rollup plugin that writes dist/THIRD_PARTY_NOTICES.md: the name, version, licence and
// licence text of every package whose code the build bundled (those with code left in an
// output after tree-shaking), as their licences (MIT) ask. One instance is shared by the
// configurations in rollup.config.mjs, so the file covers every entry.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The folder of the package a bundled file belongs to (its nearest package.json with a name). */
function packageRoot(file) {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name) return dir;
  }
  throw new Error('no package.json above ' + file);
}

export function thirdPartyNotices(outFile = 'dist/THIRD_PARTY_NOTICES.md') {
  const packages = new Map();
  return {
    name: 'third-party-notices',
    generateBundle(_options, bundle) {
      for (const output of Object.values(bundle)) {
        if (output.type !== 'chunk') continue;
        for (const [id, { renderedLength }] of Object.entries(output.modules)) {
          if (renderedLength > 0 && id.includes('/node_modules/')) packages.set(packageRoot(id), true);
        }
      }
    },
    writeBundle() {
      const sections = [...packages.keys()]
        .map((dir) => {
          const { name, version, license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
          const licenceFile = readdirSync(dir).find((file) => /^licen[cs]e(\.md|\.txt)?$/i.test(file));
          if (!licenceFile) throw new Error(`${name} ships no licence file to reproduce`);
          return { name, text: `## ${name} ${version} (${license})\n\n${readFileSync(join(dir, licenceFile), 'utf8').trim()}\n` };
        })
        .toSorted((a, b) => a.name.localeCompare(b.name));
      const intro =
        '# Third-party notices\n\nchannel-sdk bundles code from these packages into its built files (dist/, miniprogram_dist/),\n' +
        'so it installs with no dependencies. Their licences follow.\n';
      writeFileSync(outFile, [intro, ...sections.map((s) => s.text)].join('\n'));
    },
  };
}
