import { createHash, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { SIGNATURE_HEADER } from '../../server/webhooks/signature-header.js';
import { nodeCrypto } from '../../server/crypto/node.js';
import type { Logistics } from '../../schemas/logistics.js';
import type { EventLog } from './event-log.js';
import { openEventStream, readAnswer, trimAnswer, type EventStream } from '../http-io.js';
import type { PushRecord, PushResult } from './types.js';

/** A connected `channel-sandbox listen`: pushes are handed to it and it reports the receiver's answer. */
interface Listener {
  id: string;
  forwardTo: string;
  stream: EventStream;
  pending: Map<number, (outcome: Outcome) => void>;
}

/** What became of one delivery. */
interface Outcome {
  status?: number;
  error?: string;
  /** The receiver's answer body, as {@link trimAnswer} leaves it. */
  answer?: string;
}

/** The push side of the sandbox: signs, delivers directly or through a listener, records the outcome. */
export function createPusher(o: { secret: string; timeoutMs: number; defaultUrl?: string; events: EventLog }) {
  const pushes: PushRecord[] = [];
  const listeners: Listener[] = [];

  async function deliverDirect(url: string, headers: Record<string, string>, body: string): Promise<Outcome> {
    try {
      const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(o.timeoutMs) });
      // The service ignores the answer body; the sandbox keeps its start to show why a push failed.
      return { status: response.status, answer: trimAnswer(await readAnswer(response)) };
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'TimeoutError') return { error: 'timeout after ' + o.timeoutMs + ' ms' };
      return { error: 'connection failed: ' + ((error as Error & { cause?: Error }).cause?.message ?? (error as Error).message) };
    }
  }

  function deliverThrough(listener: Listener, record: PushRecord, headers: Record<string, string>, body: string): Promise<Outcome> {
    const { id, orderNo, signed, tampered } = record;
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish({ error: 'timeout after ' + o.timeoutMs + ' ms' }), o.timeoutMs);
      function finish(outcome: Outcome) {
        clearTimeout(timer);
        listener.pending.delete(id);
        resolve(outcome);
      }
      listener.pending.set(id, finish);
      listener.stream.send('push', { id, orderNo, signed, tampered, url: listener.forwardTo, headers, body, timeoutMs: o.timeoutMs });
    });
  }

  // Each body pushed to each URL, by its digest: a push of the same bytes is a repeat of the first.
  const sent = new Map<string, number>();

  async function push(logistics: Logistics, options: { url?: string | undefined; tamper?: boolean | undefined } = {}): Promise<PushResult> {
    const listener = options.url ? undefined : listeners[listeners.length - 1];
    const url = options.url ?? listener?.forwardTo ?? o.defaultUrl;
    if (!url)
      throw new Error(
        'no webhook URL: pass --to URL (or { url }), start the sandbox with --webhook-url (or webhookUrl), or run `channel-sandbox listen --forward-to URL`',
      );
    const body = JSON.stringify({ event: 'logistics.updated', logistics });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (o.secret) headers[SIGNATURE_HEADER] = await nodeCrypto.hmacHex(o.secret, body);
    // Tampering changes the body after signing, as a man in the middle would.
    const bytes = options.tamper ? body.replace(/"order_no":"/, '"order_no":"X') : body;
    const digest = url + ' ' + createHash('sha256').update(bytes).digest('hex');
    const record: PushRecord = {
      id: pushes.length + 1,
      url,
      orderNo: logistics.order_no,
      signed: !!o.secret,
      tampered: !!options.tamper,
      via: listener ? 'listener' : 'direct',
      ok: false,
      durationMs: 0,
      ...(sent.has(digest) ? { repeatOf: sent.get(digest) } : {}),
    };
    if (!sent.has(digest)) sent.set(digest, record.id);
    pushes.push(record);
    o.events.emit({ type: 'push:sent', id: record.id, url, orderNo: record.orderNo, signed: record.signed, tampered: record.tampered, via: record.via });
    const started = performance.now();
    const outcome = listener ? await deliverThrough(listener, record, headers, bytes) : await deliverDirect(url, headers, bytes);
    record.durationMs = Math.round(performance.now() - started);
    record.status = outcome.status;
    record.ok = outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300;
    if (!record.ok) record.error = outcome.error ?? 'HTTP ' + outcome.status;
    if (outcome.answer !== undefined) record.answer = outcome.answer;
    if (record.ok && saysDuplicate(outcome.answer)) record.duplicate = true;
    o.events.emit({ type: 'push', record: { ...record } });
    const { id, ok, status, durationMs, error, answer, via, orderNo, duplicate, repeatOf } = record;
    return {
      id,
      ok,
      status,
      durationMs,
      error,
      ...(answer === undefined ? {} : { answer }),
      url,
      via,
      orderNo,
      ...(duplicate ? { duplicate } : {}),
      ...(repeatOf === undefined ? {} : { repeatOf }),
    };
  }

  return {
    push,
    pushes: pushes as readonly PushRecord[],
    /** Registers a listener on an open response; it stays until that response closes. */
    addListener(res: ServerResponse, forwardTo: string): void {
      const listener: Listener = { id: randomUUID(), forwardTo, stream: openEventStream(res), pending: new Map() };
      listeners.push(listener);
      listener.stream.send('ready', { listenerId: listener.id, forwardTo, timeoutMs: o.timeoutMs, signed: !!o.secret });
      o.events.emit({ type: 'listener', connected: true, forwardTo });
      res.on('close', () => {
        listeners.splice(listeners.indexOf(listener), 1);
        for (const finish of listener.pending.values()) finish({ error: 'listener disconnected' });
        o.events.emit({ type: 'listener', connected: false, forwardTo });
      });
    },
    /** A listener's report on one delivery; false when nothing waits for it (unknown, or too late). */
    report(listenerId: string, id: number, outcome: Outcome): boolean {
      const finish = listeners.find((l) => l.id === listenerId)?.pending.get(id);
      if (finish) finish({ status: outcome.status, error: outcome.error, answer: outcome.answer === undefined ? undefined : trimAnswer(outcome.answer) });
      return !!finish;
    },
    listening: (): string[] => listeners.map((l) => l.forwardTo),
  };
}

/** A receiver's answer that says it had the push already: createWebhookHandler's `{ "ok": true, "duplicate": true }`. */
function saysDuplicate(answer: string | undefined): boolean {
  try {
    const parsed: unknown = answer ? JSON.parse(answer) : undefined;
    return typeof parsed === 'object' && parsed !== null && (parsed as { duplicate?: unknown }).duplicate === true;
  } catch {
    return false;
  }
}
