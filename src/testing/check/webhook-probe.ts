// The pushes checkWebhook sends: unique bodies of the sandbox's demo order, signed or not, and
// the answer times of those that should be accepted.
import { createHmac, randomBytes } from 'node:crypto';
import type { Logistics } from '../../schemas/logistics.js';
import { call, safeJson, type Answer } from './check-report.js';
import { demoLogistics } from '../sandbox/demo-data.js';

import { SIGNATURE_HEADER } from '../../server/webhooks/signature-header.js';
import { CONSUMED_ADVICE } from '../../server/http/route.js';

export { SIGNATURE_HEADER };
/** The service waits this long for an answer (8 s). */
export const WINDOW_MS = 8_000;

/** What checkWebhook pushes with, for one run against `url`. */
export type Probe = ReturnType<typeof createProbe>;

/** Fresh bodies, their signatures, the push itself, and the answer times of accepted pushes. */
export function createProbe(url: string, secret: string) {
  const run = randomBytes(3).toString('hex');
  let serial = 0;
  /** A fresh push body, unique (so a receiver's dedup sees a new push); `size`: exactly that many bytes. */
  const fresh = (size = 0): string => {
    const desc = `channel-sandbox check ${run}-${++serial}`;
    const body = (extra: string, pad: number) => JSON.stringify({ event: 'logistics.updated', logistics: logistics(desc + extra, pad) });
    if (!size) return body('', 0);
    const padded = body('', size - 4096);
    return body(' ' + '.'.repeat(size - Buffer.byteLength(padded) - 1), size - 4096);
  };
  const sign = (body: string, key = secret) => createHmac('sha256', key).update(body).digest('hex');
  const push = (body: string, signature: string | undefined): Promise<Answer> =>
    call(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(signature === undefined ? {} : { [SIGNATURE_HEADER]: signature }) },
        body,
        secrets: [secret], // a receiver's error may name the secret it verifies with
      },
      WINDOW_MS,
    );
  /** Answer times of the pushes that should be accepted, and the ones with no answer in the window. */
  const times: Array<[number, string]> = [];
  const late: string[] = [];
  const timed = (answer: Answer, what: string): Answer => {
    if (answer.error === undefined) times.push([answer.ms, what]);
    else if (answer.error.startsWith('no answer within')) late.push(what);
    return answer;
  };
  return { fresh, sign, push, timed, times, late };
}

/** The demo order's logistics with one tracking event that names this check, padded to `pad` extra bytes. */
function logistics(desc: string, pad: number): Logistics {
  const base = demoLogistics[0];
  const shipment = base.shipments[0];
  const time = new Date(Date.now() + 8 * 3600_000).toISOString().slice(0, 19) + '+08:00';
  const events = [...(shipment.events ?? []), { time, status: 'in_transit', desc }];
  return { ...base, shipments: [{ ...shipment, events: pad > 0 ? [...events, ...filler(pad)] : events }] };
}

/** Tracking events of about `bytes` in all. */
function filler(bytes: number) {
  const event = { time: '2024-06-01T12:00:00+08:00', status: 'in_transit', desc: '快件已到达【深圳转运中心】，正在发往下一站' };
  const size = Buffer.byteLength(JSON.stringify(event)) + 1;
  return Array.from({ length: Math.max(0, Math.floor(bytes / size)) }, () => event);
}

/**
 * The fix for a createWebhookHandler 500 that names its cause: no secret configured, or a body
 * parser that read the push first (the SDK's own advice for that framework, matched, never echoed).
 */
export function receiverErrorFix(text: string): string | undefined {
  const error = (safeJson(text) as { error?: unknown } | undefined)?.error;
  if (typeof error !== 'string') return undefined;
  if (error === 'webhook secret not configured')
    return "your receiver has no webhook secret: set it in your app's environment (CHANNEL_WEBHOOK_SECRET in the recipes, createWebhookHandler({ secret }))";
  return Object.values(CONSUMED_ADVICE).find((advice) => error.startsWith('the push body was read by something else') && error.endsWith(advice));
}
