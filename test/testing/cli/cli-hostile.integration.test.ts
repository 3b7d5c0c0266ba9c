/**
 * The `channel-sandbox` CLI (the built dist/sandbox-cli.js, in a subprocess) against a server at
 * --sandbox that is not a channel-sandbox, or is a hostile one:
 * - #30.7: `listen` POSTed each push to the URL and with the headers the event stream named, so
 *   such a server had it send pushes (with injected headers) to an internal address while it
 *   printed success for --forward-to, which got nothing. It forwards to --forward-to only, with
 *   only the push's content type and signature.
 * - #30.8: `stats`, `events` and `check token-route --sandbox` read answers without bound: against
 *   a server that answers without end they grew to 1.5 GiB. Every answer and event is capped.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, test } from 'vitest';

const cli = 'dist/sandbox-cli.js';
const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

/** Peak resident memory of a process so far, from /proc (Linux), in MiB; 0 elsewhere. */
function residentMiB(pid: number): number {
  try {
    const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return line ? Math.round(Number(line[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

/** Runs a command until it exits or `limitMs` passes (then kills it): its exit, output, time and peak memory. */
function run(args: string[], limitMs: number): Promise<{ code: number | null; stdout: string; stderr: string; ms: number; peakMiB: number; killed: boolean }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, CHANNEL_SANDBOX_URL: '' } });
    let stdout = '';
    let stderr = '';
    let peakMiB = 0;
    let killed = false;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const sample = setInterval(() => (peakMiB = Math.max(peakMiB, residentMiB(child.pid as number))), 50);
    const limit = setTimeout(() => ((killed = true), child.kill('SIGKILL')), limitMs);
    child.on('close', (code) => {
      clearInterval(sample);
      clearTimeout(limit);
      resolve({ code, stdout, stderr, ms: Math.round(performance.now() - started), peakMiB, killed });
    });
  });
}

describe('channel-sandbox listen, pointed at a hostile sandbox (#30.7)', () => {
  test('the push goes to --forward-to only, with only its content type and signature: not to the URL, nor with the headers, the event stream names', async () => {
    const seen: { forwardTo: Array<{ headers: IncomingMessage['headers']; body: string }>; internal: string[] } = { forwardTo: [], internal: [] };
    const collect = (into: (headers: IncomingMessage['headers'], body: string) => void) => (req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk));
      req.on('end', () => {
        into(req.headers, body);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    };
    const forwardTo = (await serve(collect((headers, body) => void seen.forwardTo.push({ headers, body })))) + '/webhooks/channel';
    const internal = (await serve(collect((_headers, body) => void seen.internal.push(body)))) + '/admin/steal';
    const body = JSON.stringify({ event: 'logistics.updated', logistics: { order_no: 'SO-HOSTILE', shipments: [] } });
    const signature = 'a'.repeat(64);
    const hostile = await serve((req, res) => {
      if (req.url === '/__sandbox/listen') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: ready\ndata: {"listenerId":"l1","signed":true,"timeoutMs":8000}\n\n');
        const push = {
          id: 1,
          orderNo: 'SO-HOSTILE\u001b[2J',
          signed: true,
          tampered: false,
          url: internal,
          headers: {
            'content-type': 'application/json',
            'x-channel-webhook-signature': signature,
            'x-injected': 'yes',
            authorization: 'Bearer stolen',
            cookie: 'admin=1',
          },
          body,
          timeoutMs: 8000,
        };
        res.write('event: push\ndata: ' + JSON.stringify(push) + '\n\n');
        return;
      }
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}'); // listen/l1/result
    });
    const outcome = await run(['listen', '--forward-to', forwardTo, '--sandbox', hostile], 3000);
    expect({ internal: seen.internal.length, forwarded: seen.forwardTo.length }).toEqual({ internal: 0, forwarded: 1 });
    const [got] = seen.forwardTo;
    expect(got.body).toBe(body);
    expect([got.headers['content-type'], got.headers['x-channel-webhook-signature']]).toEqual(['application/json', signature]);
    expect([got.headers['x-injected'], got.headers.authorization, got.headers.cookie]).toEqual([undefined, undefined, undefined]);
    // What it prints is what it did, and a control sequence in the event is not sent to the terminal.
    expect(outcome.stdout).toMatch(/push #1 SO-HOSTILE\[2J \(signed\) → http:\/\/127\.0\.0\.1:\d+\/webhooks\/channel: HTTP 200/);
    expect(outcome.stdout).not.toContain('\u001b');
  });
});

describe('the CLI against a server that answers without end (#30.8)', () => {
  /** Writes `head`, then 64 KiB chunks of `x` as fast as the client reads them, up to 256 MiB, never ending the answer; counts what it wrote. */
  function endless(res: ServerResponse, head: string, type: string, written: { bytes: number }) {
    res.writeHead(200, { 'content-type': type });
    res.write(head);
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const more = () => {
      while (written.bytes < 256 * 1024 * 1024 && !res.destroyed) {
        written.bytes += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
    };
    more();
  }
  const token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJl';

  test.each([
    ['stats', (base: string) => ['stats', '--sandbox', base], /answered HTTP 200 with more than 1 MiB: is it a channel-sandbox\?/],
    ['events', (base: string) => ['events', '--sandbox', base], /sent an event of more than 4 MiB: is it a channel-sandbox\?/],
    [
      'check token-route --sandbox',
      (base: string) => ['check', 'token-route', base + '/channel-token', '--sandbox', base],
      /answered HTTP 200 with more than 64 KiB to a token check: is it a channel-sandbox\?/,
    ],
  ] as const)(
    '%s: stops reading at its cap and says so (exit 1) within seconds, in little memory',
    async (_command, args, message) => {
      const written = { bytes: 0 };
      const base = await serve((req, res) => {
        req.resume();
        if (req.url === '/channel-token')
          return void res
            .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
            .end(JSON.stringify({ access_token: token, expires_in: 900 }));
        if (req.url?.startsWith('/__sandbox/events')) return endless(res, ': channel-sandbox\n\nevent: sandbox\ndata: "', 'text/event-stream', written);
        endless(res, '{"tokenCalls":"', 'application/json', written);
      });
      const outcome = await run(args(base), 10_000);
      expect({ killed: outcome.killed, code: outcome.code, stderr: outcome.stderr.trim() }).toEqual({
        killed: false,
        code: 1,
        stderr: expect.stringMatching(message),
      });
      // What the server got to write before the CLI hung up: a few MiB, not everything on offer.
      expect(written.bytes).toBeLessThan(32 * 1024 * 1024);
      expect(outcome.peakMiB).toBeLessThan(200); // 0 where /proc is missing
    },
    30_000,
  );
});
