// One process of "your backend" with the inbox (the built package, imported by name), for
// crash.integration.test.ts, test/cluster/inbox.test.ts and test/bench/inbox.mjs.
// argv[2]: JSON { client, redisUrl | clusterNodes, prefix, inboxOptions?, serve?: secret,
//   work?: { concurrency, callbackMs } }.
// serve: an HTTP receiver (createWebhookHandler with the inbox) on a free port.
// work: a worker whose callback logs { pid, key, order, attempt, phase: 'start' | 'end' } to the
//   Redis list `<prefix>log` (through this process's own client), or with logTo 'ipc' to the
//   parent, sleeping callbackMs between.
// IPC: sends { type: 'ready', port? }; on { type: 'close' } closes the worker (drains), answers
// { type: 'closed' } and exits. Reports (onError) are kept, sent on { type: 'reports' }.
import { createServer } from 'node:http';
import { createRedisInbox, createWebhookHandler, toNodeHandler } from 'channel-sdk/server';
import { connect } from '../../redis/connect.mjs';

const config = JSON.parse(process.argv[2]);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const redis = await connect(config.client, config.redisUrl, config.clusterNodes);
const inbox = createRedisInbox(redis.client, { prefix: config.prefix, ...config.inboxOptions });
const reports = [];
const keep = (error, info) => void reports.push({ ...info, message: String(error?.message ?? error) });
const log = async (entry) => {
  // logTo 'ipc': to the parent (a test that kills Redis nodes must not lose its record with them).
  if (config.logTo === 'ipc') return void process.send({ type: 'log', line: { pid: process.pid, ...entry } });
  const line = JSON.stringify({ pid: process.pid, ...entry });
  const key = config.prefix + 'log';
  return typeof redis.client.rPush === 'function' ? redis.client.rPush(key, line) : redis.client.rpush(key, line);
};

let port;
if (config.serve) {
  const handler = toNodeHandler(createWebhookHandler({ secret: config.serve, inbox, onError: keep }));
  const server = createServer(handler);
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = server.address().port;
}

let worker;
if (config.work) {
  const { concurrency = 1, callbackMs = 0 } = config.work;
  worker = inbox.process({
    concurrency,
    onError: keep,
    onLogisticsUpdated: async ({ logistics }, { dedupKey, attempt }) => {
      const entry = { key: dedupKey, order: logistics.order_no, attempt };
      await log({ ...entry, phase: 'start' });
      if (callbackMs) await sleep(callbackMs);
      await log({ ...entry, phase: 'end' });
    },
  });
}

process.on('message', async (message) => {
  if (message.type === 'reports') process.send({ type: 'reports', reports });
  if (message.type === 'close') {
    await worker?.close();
    await redis.close();
    process.send({ type: 'closed', reports });
    process.exit(0);
  }
});
process.send({ type: 'ready', port });
