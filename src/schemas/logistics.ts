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

// Named interfaces rather than z.infer: hovers and errors then say `Logistics` instead of the
// whole inferred structure. test/types/ checks both ways that they match the schemas' output.

/** A tracking event of a shipment. The interface marks none of its fields required. */
export interface TrackingEvent {
  /** ISO 8601 with offset, e.g. `2024-06-01T12:00:00+08:00`. */
  time?: string | undefined;
  status?: string | undefined;
  desc?: string | undefined;
  [field: string]: unknown;
}

/** One waybill of an order. Required-ness of these fields is not published, so all are optional. */
export interface Shipment {
  tracking_no?: string | undefined;
  express_company?: string | undefined;
  express_code?: string | undefined;
  shipment_status?: string | undefined;
  shipped_at?: string | undefined;
  events?: TrackingEvent[] | undefined;
  [field: string]: unknown;
}

/** The `logistics` object of a push: the current logistics of one order. */
export interface Logistics {
  order_no: string;
  partner_order_no?: string | undefined;
  shipments: Shipment[];
  [field: string]: unknown;
}

/** Body of a `logistics.updated` push. */
export interface LogisticsUpdatedEvent {
  event: 'logistics.updated';
  logistics: Logistics;
  [field: string]: unknown;
}

/** A push whose `event` is not one this version knows, passed through as received. */
export interface UnknownWebhookEvent {
  event: string;
  /**
   * Typed `never` so that `if (event.event === 'logistics.updated')` narrows a
   * {@link WebhookEvent} to a `logistics` of type `Logistics`: only that event carries it.
   */
  logistics: never;
  [field: string]: unknown;
}

/**
 * What `parseWebhook` resolves to: narrow on `event`.
 * @example
 * if (event.event === 'logistics.updated') save(event.logistics); // Logistics
 * else console.warn('event this version does not know:', event.event);
 */
export type WebhookEvent = LogisticsUpdatedEvent | UnknownWebhookEvent;

// The same rules as the schemas above, checked in place on a JSON.parse result: no copy, no
// allocation. The webhook hot path uses it and asks zod only for the messages of a body that
// fails (test/server/webhooks/shape.test.ts holds the two to the same answers).
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isOptionalString = (value: unknown) => value === undefined || typeof value === 'string';

function isTrackingEvent(value: unknown): boolean {
  return isRecord(value) && isOptionalString(value.time) && isOptionalString(value.status) && isOptionalString(value.desc);
}

function isShipment(value: unknown): boolean {
  if (!isRecord(value)) return false;
  if (!isOptionalString(value.tracking_no) || !isOptionalString(value.express_company) || !isOptionalString(value.express_code)) return false;
  if (!isOptionalString(value.shipment_status) || !isOptionalString(value.shipped_at)) return false;
  const events = value.events;
  if (events === undefined) return true;
  if (!Array.isArray(events)) return false;
  for (let i = 0; i < events.length; i++) if (!isTrackingEvent(events[i])) return false;
  return true;
}

/** True when `value` satisfies {@link logisticsUpdatedSchema}. */
export function isLogisticsUpdatedBody(value: unknown): value is LogisticsUpdatedEvent {
  if (!isRecord(value) || value.event !== 'logistics.updated') return false;
  const logistics = value.logistics;
  if (!isRecord(logistics) || typeof logistics.order_no !== 'string' || logistics.order_no === '' || !isOptionalString(logistics.partner_order_no))
    return false;
  const shipments = logistics.shipments;
  if (!Array.isArray(shipments)) return false;
  for (let i = 0; i < shipments.length; i++) if (!isShipment(shipments[i])) return false;
  return true;
}

/** True when `value` satisfies {@link webhookEnvelopeSchema}. */
export function isWebhookEnvelope(value: unknown): value is { event: string; [field: string]: unknown } {
  return isRecord(value) && typeof value.event === 'string';
}

/** `path: problem` for each zod issue, readable without zod's locale files. */
export function describeIssues(
  issues: ReadonlyArray<{ path: PropertyKey[]; code: string; expected?: unknown; message: string; values?: unknown[] }>,
): string[] {
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
