/**
 * `channel-sandbox push` and `fail-next` as they read (issue #46 items 6 and 7): the CLI's
 * `main()` in this process against a real sandbox and a real receiver (createWebhookHandler on
 * node:http, with a dedup store). The same order pushed twice is the same bytes, which the receiver
 * acknowledges as a duplicate: the CLI says so (and names the repeat to a receiver that does not
 * deduplicate); `--fresh` pushes a new snapshot, which the receiver runs.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { main } from '../../../src/testing/cli/cli.js';
import { describeEvent } from '../../../src/testing/sandbox/describe-event.js';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { createMemoryDedupStore, createWebhookHandler, toNodeHandler, type Logistics } from '../../../src/server-node.js';
import { startServer } from '../../helpers/server.js';

let sandbox: Sandbox;
let receiver: Server;
let receiverUrl: string;
const received: Logistics[] = [];

beforeAll(async () => {
  const handler = toNodeHandler(
    createWebhookHandler({ secret: 'whsec_cli', dedup: createMemoryDedupStore(), onLogisticsUpdated: ({ logistics }) => void received.push(logistics) }),
  );
  receiver = createServer(handler);
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  sandbox = await startSandbox({ webhookSecret: 'whsec_cli', webhookUrl: receiverUrl + '/webhooks/channel' });
});
afterAll(async () => {
  await sandbox?.close();
  receiver?.close();
});

/** Runs the CLI as `channel-sandbox …args --sandbox <url>`: its exit code and what it printed. */
async function cli(...args: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
  try {
    return { code: await main([...args, '--sandbox', sandbox.url]), out: lines.join('\n') };
  } finally {
    log.mockRestore();
  }
}

describe('channel-sandbox push: a repeat says "duplicate", --fresh sends a new snapshot', () => {
  test('the same order twice: delivered, then "duplicate" (the receiver said so); --fresh: delivered and run, twice', async () => {
    const first = await cli('push', '--order', 'SO20240601001');
    expect(first).toEqual({ code: 0, out: expect.stringMatching(/^push #1 SO20240601001 → http:\S+: delivered, HTTP 200 in \d+ ms$/) });
    const again = await cli('push', '--order', 'SO20240601001');
    expect(again.code).toBe(0);
    expect(again.out.split('\n')).toEqual([
      expect.stringMatching(/^push #2 SO20240601001 → http:\S+: duplicate, HTTP 200 in \d+ ms$/),
      '  the receiver had this push already (the same bytes as push #1) and did not run it again: --fresh pushes a new snapshot of the order',
    ]);
    expect(received.map((l) => l.order_no)).toEqual(['SO20240601001']);

    const fresh = await cli('push', '--order', 'SO20240601001', '--fresh');
    expect(fresh).toEqual({ code: 0, out: expect.stringMatching(/^push #3 SO20240601001 → \S+: delivered, HTTP 200 in \d+ ms$/) });
    const fresher = await cli('push', '--order', 'SO20240601001', '--fresh', '--json');
    expect(JSON.parse(fresher.out)).toMatchObject({ id: 4, ok: true, status: 200, orderNo: 'SO20240601001' });
    expect(JSON.parse(fresher.out)).not.toHaveProperty('duplicate');
    // Each fresh push is the order's logistics with one more event, which the sandbox keeps.
    expect(received.map((l) => l.shipments[0].events?.length)).toEqual([2, 3, 4]);
    expect(received[1].shipments[0].events?.at(-1)).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+08:00$/),
      status: 'in_transit',
      desc: 'sandbox update #1 (channel-sandbox push --fresh)',
    });
    const token = await sandbox.issueToken('qa-1');
    const pulled = await fetch(sandbox.url + '/open/api/v1/sdk/logistics?order_no=SO20240601001', { headers: { authorization: 'Bearer ' + token } });
    expect((await pulled.json()).data).toEqual(received[2]);
  });

  test('an order without shipments gets its first one; a receiver that does not deduplicate hears the repeat named', async () => {
    const plain = await startServer((_req, res) => void res.writeHead(200).end('ok'));
    try {
      const to = plain.url + '/hook';
      await cli('push', '--order', 'SO20240602002', '--to', to);
      const repeat = await cli('push', '--order', 'SO20240602002', '--to', to);
      expect(repeat.out.split('\n')[1]).toMatch(
        /^ {2}the same bytes as push #\d+: a receiver that deduplicates acknowledges it without running it again \(--fresh pushes a new snapshot of the order\)$/,
      );
      const created = await sandbox.issueToken('qa-1').then((token) =>
        fetch(sandbox.url + '/open/api/v1/sdk/orders', {
          method: 'POST',
          headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' },
          body: JSON.stringify({ partner_order_no: 'P-1' }),
        }).then((r) => r.json() as Promise<{ data: { order_no: string } }>),
      );
      const result = await sandbox.pushLogistics(created.data.order_no, { url: to, fresh: true });
      expect(result).toMatchObject({ ok: true, orderNo: created.data.order_no });
      expect(sandbox.pushes.at(-1)).not.toHaveProperty('repeatOf');
      await expect(sandbox.pushLogistics({ order_no: 'SO1', shipments: [] }, { fresh: true })).rejects.toThrow(/fresh takes an order number/);
    } finally {
      await plain.close();
    }
  });
});

describe('channel-sandbox fail-next: a sentence for every count', () => {
  test.each([
    ['1', 'the next data call answers 401'],
    ['2', 'the next 2 data calls answer 401'],
    ['0', 'no data call is set to fail: the next ones answer as usual'],
  ])('fail-next %s', async (count, sentence) => {
    expect(await cli('fail-next', count)).toEqual({ code: 0, out: sentence });
  });
  test('fail-next 1 --status 503', async () => {
    expect(await cli('fail-next', '1', '--status', '503')).toEqual({ code: 0, out: 'the next data call answers 503' });
  });
  // What the sandbox's own terminal (`channel-sandbox start`), `events` and `listen` print for the
  // same calls: one sentence with the CLI's (before, "the next 1 data call answer 401").
  test.each([
    ['1', [], 'the next data call answers 401'],
    ['2', ['--status', '503'], 'the next 2 data calls answer 503'],
    ['0', [], 'no data call is set to fail: the next ones answer as usual'],
  ])("fail-next %s %j: the sandbox's event line says it as the CLI does", async (count, flags, sentence) => {
    const lines: string[] = [];
    const stop = sandbox.subscribe((event) => void (event.type === 'control' && lines.push(describeEvent(event))));
    try {
      expect(await cli('fail-next', count, ...flags)).toEqual({ code: 0, out: sentence });
      expect(lines).toEqual([sentence]);
    } finally {
      stop();
    }
  });
});
