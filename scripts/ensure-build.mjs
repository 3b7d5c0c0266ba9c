// Builds dist/ (npm run build) unless it is already built from the current sources: the slower
// stages (test:cluster, test:valkey, test:frameworks, the benches, the demo) call it first, so a
// CI run builds once (npm run verify builds, then every later stage finds the build current) and
// a stage run by hand after an edit still gets a fresh build. "Current" means .tmp/build-stamp is
// newer than every file the build reads.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// Outside dist/, which ships whole.
const stamp = '.tmp/build-stamp';
const inputs = ['src', 'scripts', 'rollup.config.mjs', 'package.json', 'tsconfig.json'];

function newest(path) {
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

/** Whether dist/ was built from the sources as they are now. */
export function buildIsCurrent() {
  return (
    existsSync(stamp) &&
    existsSync('dist/index.js') &&
    existsSync('miniprogram_dist/index.js') &&
    statSync(stamp).mtimeMs >= Math.max(...inputs.filter(existsSync).map(newest))
  );
}

/** Records that dist/ is built from the sources as they are now (the last step of npm run build). */
export function writeBuildStamp() {
  mkdirSync('.tmp', { recursive: true });
  writeFileSync(stamp, new Date().toISOString() + '\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === '--stamp') writeBuildStamp();
  else if (!buildIsCurrent()) {
    const { status } = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
    if (status !== 0) process.exit(status ?? 1);
  }
}
