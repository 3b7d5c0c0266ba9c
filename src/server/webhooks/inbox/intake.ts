// The webhook handler's side of an inbox: a verified, well-formed push is appended, and answered
// 2xx only once the inbox says it is stored; 503 when it fails or is slow, so the service delivers
// it again. Nothing is acknowledged that is not stored.
import { bounded } from '../../../shared/bounded.js';
import { describeValue, fail, milliseconds } from '../../../shared/check.js';
import { MAX_DELAY } from '../../../shared/signal.js';
import type { WebhookEvent } from '../../../schemas/logistics.js';
import type { Crypto } from '../../crypto/crypto.js';
import { answer, type Outgoing } from '../../http/route.js';
import { isLogisticsUpdated, latestEventTime } from '../parse.js';
import { errorType } from '../../../shared/otel-api.js';
import type { WebhookTelemetry } from '../../telemetry/webhook-telemetry.js';
import type { InboxPush, WebhookInbox } from './inbox-types.js';

/** The handler options an inbox brings (checked by {@link checkInboxOptions}). */
export interface InboxHandlerOptions {
  /**
   * Where each verified push is stored before the answer: `createRedisInbox(redis)`, or your own
   * queue. The handler then answers 202 as soon as it is stored (200 `duplicate` for a push stored
   * before) and runs no callback: `inbox.process({ onLogisticsUpdated })` does, in your workers.
   */
  inbox?: WebhookInbox;
  /**
   * Milliseconds `inbox.append` may take; past it (or when it fails) the answer is 503 with
   * Retry-After, so that the service delivers the push again. Keep it well inside the service's
   * 8-second window. @default 3000
   */
  inboxTimeoutMs?: number;
}

const STORED = answer(202, { ok: true, queued: true });
export const INBOX_DUPLICATE = answer(200, { ok: true, duplicate: true });
export const INBOX_UNAVAILABLE = answer(503, { error: 'the push could not be stored; deliver it again later' }, { 'retry-after': '5' });
// With an inbox, the callback options belong to inbox.process().
const CALLBACK_OPTIONS = ['onLogisticsUpdated', 'onEvent', 'dedup', 'dedupTimeoutMs', 'dedupLeaseMs', 'slowCallbackMs', 'callbackTimeoutMs'];

/** The inbox options of createWebhookHandler, checked; true when an inbox is given. */
export function checkInboxOptions(o: Record<string, unknown>): boolean {
  if (o.inbox === undefined) {
    if (o.inboxTimeoutMs !== undefined) fail('createWebhookHandler: inboxTimeoutMs is set but no inbox is given');
    return false;
  }
  const inbox = o.inbox as Record<string, unknown> | null;
  if (typeof inbox !== 'object' || inbox === null || typeof inbox.append !== 'function')
    fail('createWebhookHandler: inbox must have append(push), e.g. createRedisInbox(redis); got ' + describeValue(o.inbox));
  const extra = CALLBACK_OPTIONS.filter((name) => o[name] !== undefined);
  if (extra.length)
    fail(
      'createWebhookHandler: with an inbox the handler only stores pushes; pass ' +
        extra.join(', ') +
        ' to inbox.process({ onLogisticsUpdated, ... }) in your workers instead (the inbox deduplicates pushes itself)',
    );
  if (o.inboxTimeoutMs !== undefined) milliseconds('createWebhookHandler: inboxTimeoutMs', o.inboxTimeoutMs, 1, MAX_DELAY, 3000);
  return true;
}

type Report = (error: unknown, info: { stage: 'inbox' | 'duplicate'; level: 'info' | 'error'; status: number }) => void;

/** The intake of a handler with an inbox (options already checked), or undefined without one. */
export function inboxIntake(crypto: Crypto, options: InboxHandlerOptions, report: Report, telemetry?: WebhookTelemetry) {
  const { inbox, inboxTimeoutMs = 3000 } = options;
  if (!inbox) return undefined;
  return async (event: WebhookEvent, rawBody: Uint8Array, dedupKey: () => Promise<string>): Promise<Outgoing> => {
    let result: unknown;
    const stage = telemetry?.stage('inbox');
    try {
      const logistics = isLogisticsUpdated(event) ? event.logistics : undefined;
      const snapshotAt = logistics && latestEventTime(logistics);
      let body: string | undefined;
      const push: InboxPush = {
        key: await dedupKey(),
        // Decoded only for an inbox that reads it (the Redis inbox stores the bytes).
        get body() {
          return (body ??= crypto.utf8(rawBody));
        },
        rawBody,
        event: event.event,
        ...(logistics ? { orderNo: logistics.order_no } : {}),
        ...(snapshotAt !== undefined ? { snapshotAt } : {}),
        receivedAt: Date.now(),
      };
      result = await bounded(
        () => inbox.append(push),
        inboxTimeoutMs,
        () => new Error('the inbox did not store the push within inboxTimeoutMs (' + inboxTimeoutMs + ' ms); answered 503'),
      );
    } catch (error) {
      stage?.fail(errorType(error));
      report(error, { stage: 'inbox', level: 'error', status: 503 });
      return INBOX_UNAVAILABLE;
    }
    stage?.end({ 'channel.inbox.result': result === 'duplicate' ? 'duplicate' : 'stored' });
    if (result === 'duplicate') {
      report(new Error('push already stored (same body); acknowledged, not stored again'), { stage: 'duplicate', level: 'info', status: 200 });
      return INBOX_DUPLICATE;
    }
    return STORED;
  };
}
