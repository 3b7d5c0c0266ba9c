// What a feature costs the client bundles today: `node scripts/size-of.mjs 32` (or 34) copies
// src/ to a temporary folder, takes the feature out there by the edits listed below, and bundles
// both trees as `npm run size` does (browser entry, all exports and createClient only, esbuild
// minified; the WeChat build as shipped), min+gz. Gzip is not additive, so a feature is measured
// by taking it out of the code as it is now, not by summing modules. Each edit must apply: when
// the code it names has moved, the script stops and says which, and the list is to be updated.
// docs/maintainers/size.md has the figures.
import { build } from 'esbuild';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

/** Per issue: [file, text as it is now, text without the feature]. */
const features = {
  32: {
    title: "#32: client.fetch, client.hostRequest, isRetryable, beforeSend (with buildUrl's plain-path lane, added for client.fetch's overhead)",
    edits: [
      ['src/index.ts', '  const native = createNativeFetch(fetch, bodies);\n', ''],
      ['src/index.ts', '      native: { read: readFetchArguments, methods: (run) => ({ fetch: run }), transport: native },\n', ''],
      ['src/miniprogram.ts', '      native: Object.assign({ transport: transports.native }, hostRequestCalls),\n', ''],
      ['src/client-exports.ts', "export { isRetryable } from './core/requests/is-retryable.js';\n", ''],
      ['src/core/options.ts', "  'beforeSend',\n", ''],
      [
        'src/core/options.ts',
        "    beforeSend:\n      beforeSend === undefined || typeof beforeSend === 'function'\n        ? beforeSend\n        : fail('beforeSend must be a function (attempt) => void that changes attempt.headers or attempt.body; got ' + describeValue(beforeSend)),\n",
        '',
      ],
      [
        'src/core/requests/attempts.ts',
        "import { runBeforeSend, type Outgoing } from './before-send.js';",
        "import type { Outgoing } from './before-send.js';",
      ],
      ['src/core/requests/attempts.ts', /      if \(beforeSend\) \{[\s\S]*?\n      \}\n(?=      const startedAt)/, ''],
      ['src/core/requests/attempts.ts', "            if (call.kind === 'native') return response;\n", ''],
      ['src/core/requests/attempts.ts', '    passOn: call.passOn,\n', ''],
      ['src/core/client.ts', "call.kind === 'native' || ", ''],
      ['src/core/client.ts', /  return platform\.native\s*\?[\s\S]*?: client;/, '  return client as never;'],
      [
        'src/core/requests/call-options.ts',
        "kind === 'native' ? (platform.native as NativeCalls).read(input.path, input.options) : undefined",
        '(undefined as unknown as { url: string } | undefined)',
      ],
      ['src/core/requests/call-options.ts', 'transport: (n ? (platform.native as NativeCalls) : platform).transport,', 'transport: platform.transport,'],
      [
        'src/core/requests/build-url.ts',
        "typeof path === 'string' && plainPath.test(path) ? base + (path.charAt(0) === '/' ? path : '/' + path) : checkedUrl(base, path)",
        'checkedUrl(base, path)',
      ],
    ],
  },
  34: {
    title:
      "#34 since #44: what every client carries for telemetry (the option's check and the hooks' call sites; the plug-in itself is measured by npm run size)",
    edits: [
      ['src/core/options.ts', "  'telemetry',\n", ''],
      ['src/core/options.ts', /    \/\/ The plug-in, not its options[\s\S]*?got " \+ describeValue\(telemetry\)\),\n/, ''],
      ['src/core/client.ts', 'config.telemetry && config.telemetry.attach({ redact: redact.text, scope: platform.scope })', 'undefined'],
      ['src/core/token-lifecycle/token-obtain.ts', '(options.telemetry ? options.telemetry.provider(forced, reason, asked) : asked())', 'asked()'],
      ['src/core/requests/attempts.ts', '    const parent = telemetry && telemetry.active();\n', ''],
      [
        'src/core/requests/attempts.ts',
        '(telemetry ? telemetry.within(parent, () => token(get, stop, context)) : token(get, stop, context))',
        'token(get, stop, context)',
      ],
      ['src/core/requests/attempts.ts', '        end = telemetry && telemetry.attempt(method, url, attempt, resend, request.headers, parent);\n', ''],
      ['src/core/requests/attempts.ts', '      if (end) end(response && response.status, failure && failure.code);\n', ''],
      ['src/core/requests/attempts.ts', '          if (telemetry) telemetry.replay();\n', ''],
      ['src/index.ts', '      scope: globalThis,\n', ''],
    ],
  },
};

const feature = features[process.argv[2]];
if (!feature) {
  console.error('usage: node scripts/size-of.mjs <' + Object.keys(features).join('|') + '>');
  process.exit(2);
}

const root = resolve('.');
const copy = mkdtempSync(join(tmpdir(), 'size-of-'));
try {
  cpSync(join(root, 'src'), join(copy, 'src'), { recursive: true });
  cpSync(join(root, 'scripts'), join(copy, 'scripts'), { recursive: true });
  cpSync(join(root, 'tsconfig.json'), join(copy, 'tsconfig.json'));
  cpSync(join(root, 'package.json'), join(copy, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
  for (const [file, now, without] of feature.edits) {
    const text = readFileSync(join(copy, file), 'utf8');
    const found = typeof now === 'string' ? text.includes(now) : now.test(text);
    if (!found) throw new Error(`${file} no longer has ${String(now).slice(0, 80)}: update the edits of this feature in scripts/size-of.mjs`);
    writeFileSync(join(copy, file), text.replace(now, without));
  }
  const browser = { bundle: true, minify: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'silent' };
  const gz = (result) => gzipSync(result.outputFiles[0].contents, { level: 9 }).length;
  async function measure(dir) {
    const { buildPlainCommonJs } = await import(join(dir, 'scripts/build-miniprogram.mjs'));
    const here = { ...browser, absWorkingDir: dir };
    return {
      'browser, all exports': gz(await build({ ...here, entryPoints: ['src/index.ts'] })),
      'browser, createClient only': gz(
        await build({ ...here, stdin: { contents: "export { createClient } from './src/index.ts';", resolveDir: dir, loader: 'ts' } }),
      ),
      'WeChat (miniprogram_dist)': gz(await buildPlainCommonJs({ absWorkingDir: dir, write: false, logLevel: 'silent' })),
    };
  }
  const withIt = await measure(root);
  const withoutIt = await measure(copy);
  const kb = (bytes) => (bytes / 1024).toFixed(2) + ' KB';
  console.log(`${feature.title}\n\n| bundle | with | without | it adds |\n|---|---|---|---|`);
  for (const name of Object.keys(withIt))
    console.log(`| ${name} | ${kb(withIt[name])} | ${kb(withoutIt[name])} | +${kb(withIt[name] - withoutIt[name])} (${withIt[name] - withoutIt[name]} B) |`);
} finally {
  rmSync(copy, { recursive: true, force: true });
}
