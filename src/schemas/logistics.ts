import * as z from 'zod/mini';

// zod/mini keeps these schemas small enough for edge bundles. Every object is loose:
// fields the interface does not list are kept, so a new field never breaks a receiver.

/** A tracking event of a shipment. The interface marks none of its fields required. */
export const trackingEventSchema = z.looseObject({
  time: z.optional(z.string()),
  status: z.optional(z.string()),
  desc: z.optional(z.string()),
});

/** One waybill. Required-ness of these fields is not published, so all are optional. */
export const shipmentSchema = z.looseObject({
  tracking_no: z.optional(z.string()),
  express_company: z.optional(z.string()),
  express_code: z.optional(z.string()),
  shipment_status: z.optional(z.string()),
  shipped_at: z.optional(z.string()),
  events: z.optional(z.array(trackingEventSchema)),
});

/** The `logistics` object of a push: the current logistics of one order. */
export const logisticsSchema = z.looseObject({
  order_no: z.string().check(z.minLength(1)),
  partner_order_no: z.optional(z.string()),
  shipments: z.array(shipmentSchema),
});

/** Body of a `logistics.updated` push. */
export const logisticsUpdatedSchema = z.looseObject({
  event: z.literal('logistics.updated'),
  logistics: logisticsSchema,
});

/** Any push: only `event` is required, so that a new event type does not break receivers. */
export const webhookEnvelopeSchema = z.looseObject({
  event: z.string(),
});

/** Token endpoint answer: `{ code: 0, data: { access_token, expires_in, token_type } }`. */
export const tokenResponseSchema = z.looseObject({
  code: z.literal(0),
  data: z.looseObject({
    access_token: z.string().check(z.minLength(1)),
    expires_in: z.number().check(z.positive()),
    token_type: z.string().check(z.regex(/^bearer$/i)),
  }),
});

export type TrackingEvent = z.infer<typeof trackingEventSchema>;
export type Shipment = z.infer<typeof shipmentSchema>;
export type Logistics = z.infer<typeof logisticsSchema>;
export type LogisticsUpdatedEvent = z.infer<typeof logisticsUpdatedSchema>;
/** A push whose `event` is not `logistics.updated`, passed through as received. */
export type UnknownWebhookEvent = { event: string; [key: string]: unknown };
/** What `parseWebhook` resolves to. */
export type WebhookEvent = LogisticsUpdatedEvent | UnknownWebhookEvent;

/** `path: problem` for each zod issue, readable without zod's locale files. */
export function describeIssues(issues: ReadonlyArray<{ path: PropertyKey[]; code: string; expected?: unknown; message: string; values?: unknown[] }>): string[] {
  return issues.map((issue) => {
    const path = issue.path.length ? issue.path.map(String).join('.') : '(body)';
    const what =
      issue.code === 'invalid_type'
        ? 'expected ' + String(issue.expected)
        : issue.code === 'invalid_value'
          ? 'expected ' + (issue.values || []).map((v) => JSON.stringify(v)).join(' or ')
          : issue.code === 'too_small'
            ? 'must not be empty'
            : issue.message;
    return path + ': ' + what;
  });
}
