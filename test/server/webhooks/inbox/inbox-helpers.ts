// Shared by the inbox tests: signed pushes through a handler, logistics snapshots of an order at a
// given time, and a wait for a condition with generous slack (the machine is shared).
import { createWebhookHandler, signWebhookBody, type Logistics } from '../../../../src/server-node.js';
import { sampleLogistics } from '../../helpers.js';

export const webhookSecret = 'whsec_inbox';

/** A snapshot of `order` whose newest tracking event is at `time` (ISO), with an optional marker. */
export function snapshot(order: string, time: string, note = ''): Logistics {
  const shipment = sampleLogistics.shipments[0];
  return {
    order_no: order,
    shipments: [{ ...shipment, shipped_at: '2024-06-01T08:00:00+08:00', events: [{ time, status: 'in_transit', desc: 'at ' + time + note }] }],
  };
}

export const bodyOf = (logistics: Logistics) => JSON.stringify({ event: 'logistics.updated', logistics });

/** POSTs a body to a Fetch handler, signed with `secret`: the status and the JSON answer. */
export async function post(handler: ReturnType<typeof createWebhookHandler>, body: string, secret: string | Uint8Array = webhookSecret) {
  const response = await handler(
    new Request('http://partner.example.com/webhooks/channel', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-channel-webhook-signature': await signWebhookBody(body, secret) },
    }),
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `check()` is true; fails after `ms` with `what`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await sleep(20);
  }
}
