// The in-place shape check of the webhook hot path must accept exactly what the zod schemas
// accept, and hand back what zod would (the same data), over bodies near and far from the shape.
import * as fc from 'fast-check';
import { expect, test } from 'vitest';
import { isLogisticsUpdatedBody, isWebhookEnvelope, logisticsUpdatedSchema, webhookEnvelopeSchema } from '../../../src/schemas/logistics.js';
import { nodeCrypto } from '../../../src/server/crypto/node.js';
import { parsePayload as parse } from '../../../src/server/webhooks/parse.js';
import { sized } from '../../helpers/tier.js';

const parsePayload = (raw: string) => parse(raw, nodeCrypto.utf8);
// Bodies checked against zod: full-size in the integration tier, which runs this file again.
const BODIES = sized(3000, 300);

const json = fc.jsonValue({ maxDepth: 2 });
const text = fc.string({ maxLength: 3 });
/** Mostly the right type, sometimes missing, sometimes anything. */
const field = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 24, arbitrary: valid }, { weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: json });
const optional = { requiredKeys: [] as never[] };
const trackingEvent = fc.oneof(
  { weight: 24, arbitrary: fc.record({ time: field(text), status: field(text), desc: field(text), note: json }, optional) },
  { weight: 1, arbitrary: json },
);
const shipment = fc.oneof(
  {
    weight: 24,
    arbitrary: fc.record(
      {
        tracking_no: field(text),
        express_company: field(text),
        express_code: field(text),
        shipment_status: field(text),
        shipped_at: field(text),
        events: field(fc.array(trackingEvent, { maxLength: 3 })),
        more: json,
      },
      optional,
    ),
  },
  { weight: 1, arbitrary: json },
);
const logistics = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      { order_no: field(text), partner_order_no: field(text), shipments: field(fc.array(shipment, { maxLength: 3 })), more: json },
      { requiredKeys: ['order_no', 'shipments'] },
    ),
  },
  { weight: 1, arbitrary: json },
);
const body = fc
  .oneof(
    {
      weight: 8,
      arbitrary: fc.record(
        {
          event: fc.oneof({ weight: 6, arbitrary: fc.constant('logistics.updated') }, { weight: 1, arbitrary: text }, { weight: 1, arbitrary: json }),
          logistics,
          extra: json,
        },
        { requiredKeys: ['event'] },
      ),
    },
    { weight: 1, arbitrary: json },
  )
  // What a push really is: JSON text (undefined values drop out).
  .map((value) => JSON.stringify(value) ?? 'null');

test('the in-place check agrees with the zod schemas on every body', () => {
  let valid = 0;
  fc.assert(
    fc.property(body, (raw) => {
      const value = JSON.parse(raw);
      const accepted = logisticsUpdatedSchema.safeParse(value).success;
      if (accepted) valid++;
      expect(isLogisticsUpdatedBody(value)).toBe(accepted);
      expect(isWebhookEnvelope(value)).toBe(webhookEnvelopeSchema.safeParse(value).success);
    }),
    { numRuns: BODIES },
  );
  // The generator reaches both sides of the line.
  expect(valid).toBeGreaterThan(BODIES * 0.05);
  expect(valid).toBeLessThan(BODIES * 0.95);
});

test('parsePayload returns what zod returns, and rejects what zod rejects', () => {
  fc.assert(
    fc.property(body, (raw) => {
      const value = JSON.parse(raw);
      const envelope = webhookEnvelopeSchema.safeParse(value);
      const full = envelope.success && envelope.data.event === 'logistics.updated' ? logisticsUpdatedSchema.safeParse(value) : envelope;
      let got: unknown;
      try {
        got = { data: parsePayload(raw) };
      } catch (error) {
        got = { refused: /does not have the expected shape/.test((error as Error).message) };
      }
      expect(got).toEqual(full.success ? { data: full.data } : { refused: true });
    }),
    { numRuns: sized(1000, 150) },
  );
});
