// The last step of `npm run build`: writes server/package.json, testing/package.json and
// miniprogram/package.json, one folder per subpath of package.json's `exports`, for resolvers
// that ignore `exports` (webpack 4, TypeScript `moduleResolution: node10`). Each names the
// subpath's universal build by `main`, `module` and `types`; the `node` condition is one only
// `exports` knows, so Node itself still gets the node:crypto server build. The folders are
// generated, not kept in git (.gitignore), and ship through package.json's `files`;
// test/package/package.test.ts checks both.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const { exports } = JSON.parse(readFileSync('package.json', 'utf8'));

for (const [subpath, target] of Object.entries(exports)) {
  if (subpath === '.' || typeof target === 'string') continue; // the root, './package.json'
  const folder = subpath.slice(2);
  const stub = { main: '.' + target.require.default, module: '.' + target.import.default, types: '.' + target.require.types };
  mkdirSync(folder, { recursive: true });
  writeFileSync(`${folder}/package.json`, JSON.stringify(stub, null, 2) + '\n');
}
