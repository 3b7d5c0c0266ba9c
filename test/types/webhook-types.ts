// Type tests, compiled by `npm run typecheck:examples` (strict, exactOptionalPropertyTypes, no DOM)
// against the built package: the webhook types flow, and the named interfaces it ships match the
// schemas the handler validates with (which stay inside the package: src/schemas).
import { logisticsSchema, logisticsUpdatedSchema, shipmentSchema, trackingEventSchema } from '../../src/schemas/logistics.js';
import {
  createWebhookHandler,
  parseWebhook,
  type Logistics,
  type LogisticsUpdatedEvent,
  type Shipment,
  type TrackingEvent,
  type WebhookEvent,
} from 'channel-sdk/server';

type Output<S> = S extends { _zod: { output: infer O } } ? O : never;
/** The named keys of T, without its index signature. */
type Named<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Compiles only when A and B name the same fields and are assignable both ways. */
function sameShape<A, B>(_check: Mutual<A, B> extends true ? (Mutual<Named<A>, Named<B>> extends true ? true : false) : false): void {}

sameShape<Output<typeof trackingEventSchema>, TrackingEvent>(true);
sameShape<Output<typeof shipmentSchema>, Shipment>(true);
sameShape<Output<typeof logisticsSchema>, Logistics>(true);
sameShape<Output<typeof logisticsUpdatedSchema>, LogisticsUpdatedEvent>(true);

export async function narrowsOnEvent(body: string, signature: string): Promise<void> {
  const event: WebhookEvent = await parseWebhook({ body, signature, secret: 'whsec' });
  if (event.event === 'logistics.updated') {
    const logistics: Logistics = event.logistics;
    const first: string | undefined = logistics.shipments[0]?.events?.[0]?.desc;
    void first;
  } else {
    const name: string = event.event;
    void name;
  }
  switch (event.event) {
    case 'logistics.updated': {
      const orderNo: string = event.logistics.order_no;
      void orderNo;
      break;
    }
    default: {
      const other: unknown = event['order'];
      void other;
    }
  }
}

// The callbacks receive named types; a secret may come from the environment, lazily.
createWebhookHandler({
  secret: () => process.env.CHANNEL_WEBHOOK_SECRET,
  onLogisticsUpdated: (event, context) => {
    const logistics: Logistics = event.logistics;
    const rawBody: Uint8Array = context.rawBody;
    void logistics;
    void rawBody;
  },
  onEvent: (event) => {
    const name: string = event.event;
    void name;
  },
});

// @ts-expect-error: a static secret must be a string or bytes, not possibly undefined
createWebhookHandler({ secret: process.env.CHANNEL_WEBHOOK_SECRET, onLogisticsUpdated: () => {} });
