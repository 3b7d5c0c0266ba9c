// npm run bench:files: an upload through channel-sdk/miniprogram vs a direct host uploadFile,
// over the same WeChat emulation (test/helpers/hosts.ts: real HTTP, multipart from a file on
// disk) and the same local server; then the same for downloads. Rounds interleaved, medians.
// Target (issue #22): SDK / direct <= 1.05.
import { createServer } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { createClient } from 'channel-sdk/miniprogram';

const quick = process.argv.includes('--quick');
const dir = mkdtempSync(join(tmpdir(), 'bench-files-'));
const hostsFile = join(dir, 'hosts.mjs');
await build({ entryPoints: ['test/helpers/hosts.ts'], bundle: true, platform: 'node', format: 'esm', outfile: hostsFile, logLevel: 'silent' });
const { createHost } = await import(pathToFileURL(hostsFile).href);

const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
const token = `${b64({ alg: 'HS256' })}.${b64({ sub: 'bench', iat: 1, exp: 4e9 })}.sig`;
const payload = Buffer.alloc(64 * 1024, 7);
const server = createServer((req, res) => {
  let size = 0;
  req.on('data', (c) => (size += c.length));
  req.on('end', () => {
    if (req.headers.authorization !== 'Bearer ' + token) return void res.writeHead(401).end('{"code":401}');
    if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': payload.length }).end(payload);
    const body = JSON.stringify({ code: 0, data: { size } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  });
});
server.keepAliveTimeout = 60_000;
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;
const filePath = join(dir, 'photo.jpg');
writeFileSync(filePath, payload);

const wx = createHost('wx');
const client = createClient({ baseUrl: base, tokenProvider: () => token, request: wx.request, uploadFile: wx.uploadFile, downloadFile: wx.downloadFile });
const header = { authorization: 'Bearer ' + token };
const direct = {
  upload: () => new Promise((resolve, reject) => wx.uploadFile({ url: base + '/upload', filePath, name: 'file', formData: {}, header, success: (r) => (r.statusCode === 200 ? resolve(JSON.parse(r.data).data) : reject(new Error(String(r.statusCode)))), fail: reject })),
  download: () => new Promise((resolve, reject) => wx.downloadFile({ url: base + '/download', header, success: (r) => (r.statusCode === 200 ? resolve(r) : reject(new Error(String(r.statusCode)))), fail: reject })),
};
const sdk = {
  upload: () => client.upload('/upload', { filePath, name: 'file' }),
  download: () => client.download('/download'),
};

const median = (xs) => xs.toSorted((a, b) => a - b)[Math.floor(xs.length / 2)];
async function time(fn, n) {
  const t = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return ((performance.now() - t) * 1000) / n;
}
const rounds = quick ? 5 : 15;
const perRound = quick ? 40 : 200;
const rows = [];
for (const kind of ['upload', 'download']) {
  for (let i = 0; i < 50; i++) {
    await direct[kind]();
    await sdk[kind]();
  }
  const a = [];
  const b = [];
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first each round.
    if (r % 2) {
      a.push(await time(direct[kind], perRound));
      b.push(await time(sdk[kind], perRound));
    } else {
      b.push(await time(sdk[kind], perRound));
      a.push(await time(direct[kind], perRound));
    }
  }
  const ratios = a.map((x, i) => b[i] / x);
  rows.push(`| ${kind} (64 KiB) | ${median(a).toFixed(0)} | ${median(b).toFixed(0)} | ${median(ratios).toFixed(3)} | ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)} |`);
}
console.log(`#### 64 KiB files over the WeChat emulation, ${rounds} interleaved rounds × ${perRound} sequential transfers (median µs per transfer)\n`);
console.log('| transfer | direct wx.uploadFile / downloadFile | channel-sdk | × direct (median of per-round ratios) | ratio range |\n|---|---|---|---|---|\n' + rows.join('\n'));
server.close();
rmSync(dir, { recursive: true, force: true });
