import type { Logistics } from '../../schemas/logistics.js';
import { demoLogistics } from './demo-data.js';

/** An order as the sandbox's own order routes answer it (the interface does not publish an order's shape). */
export interface SandboxOrder {
  order_no: string;
  partner_order_no?: string;
  /** `created` for orders made through `POST …/orders`; the demo orders are `shipped` and `delivered`. */
  status: string;
  sku?: string;
  qty?: number;
  /** ISO 8601 with a UTC offset. */
  created_at: string;
}

/** Most orders `POST …/orders` keeps; the oldest created one goes first. */
const MAX_CREATED = 10_000;

const demoOrders: SandboxOrder[] = [
  { order_no: 'SO20240601001', partner_order_no: 'P-10001', status: 'shipped', created_at: '2024-06-01T09:12:00+08:00' },
  { order_no: 'SO20240602002', partner_order_no: 'P-10002', status: 'delivered', created_at: '2024-06-02T08:45:00+08:00' },
];

/**
 * What a `POST …/orders` body must hold: `{ partner_order_no, sku?, qty? }`. Undefined when
 * valid, else every problem, each saying what to send.
 */
export function orderBodyProblems(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the body must be a JSON object like {"partner_order_no":"P-20001"}';
  const { partner_order_no, sku, qty } = body as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof partner_order_no !== 'string' || partner_order_no.trim() === '' || partner_order_no.length > 64)
    problems.push('partner_order_no: your order number, a non-empty string of at most 64 characters, is required');
  if (sku !== undefined && (typeof sku !== 'string' || sku.trim() === '' || sku.length > 64))
    problems.push('sku: a non-empty string of at most 64 characters when given');
  if (qty !== undefined && (typeof qty !== 'number' || !Number.isInteger(qty) || qty < 1 || qty > 999))
    problems.push('qty: a whole number from 1 to 999 when given');
  return problems.length ? problems.join('; ') : undefined;
}

/** The sandbox's orders: the two demo orders plus the ones created while it runs (in memory). */
export function createOrderStore(now: () => number) {
  const orders = new Map(demoOrders.map((order) => [order.order_no, { ...order }]));
  const logistics = new Map<string, Logistics>(demoLogistics.map((l) => [l.order_no, l]));
  const created: string[] = [];
  let sequence = 0;
  let snapshots = 0;

  /** The logistics of an order: the demo ones have shipments; a created one has none yet. */
  function logisticsOf(orderNo: string): Logistics | undefined {
    const order = orders.get(orderNo);
    if (!order) return undefined;
    return logistics.get(orderNo) ?? { order_no: orderNo, ...(order.partner_order_no ? { partner_order_no: order.partner_order_no } : {}), shipments: [] };
  }

  return {
    list: (): SandboxOrder[] => [...orders.values()],
    get: (orderNo: string): SandboxOrder | undefined => orders.get(orderNo),
    logistics: logisticsOf,
    /**
     * A new snapshot of an order's logistics, kept (the logistics route answers it from now on):
     * one more tracking event, now, on its last shipment (a first shipment for an order without
     * one), numbered, so that its push differs from every earlier one.
     */
    snapshot(orderNo: string): Logistics | undefined {
      const current = logisticsOf(orderNo);
      if (!current) return undefined;
      const time = new Date(now() + 8 * 3600_000).toISOString().slice(0, 19) + '+08:00';
      const shipments = current.shipments.map((shipment) => ({ ...shipment, events: [...(shipment.events ?? [])] }));
      if (!shipments.length)
        shipments.push({
          tracking_no: 'SB' + orderNo.replace(/^SO/, ''),
          express_company: '顺丰速运',
          express_code: 'SF',
          shipment_status: 'collected',
          shipped_at: time,
          events: [],
        });
      const last = shipments[shipments.length - 1];
      last.events.push({ time, status: last.shipment_status ?? 'in_transit', desc: `sandbox update #${++snapshots} (channel-sandbox push --fresh)` });
      const next: Logistics = { ...current, shipments };
      logistics.set(orderNo, next);
      return next;
    },
    /** Creates an order from a body that passed {@link orderBodyProblems}. */
    create(body: { partner_order_no: string; sku?: string; qty?: number }): SandboxOrder {
      const date = new Date(now() + 8 * 3600_000).toISOString(); // UTC+8, as the demo orders are written
      let orderNo: string;
      do orderNo = 'SO' + date.slice(0, 10).replaceAll('-', '') + String(++sequence).padStart(3, '0');
      while (orders.has(orderNo));
      const order: SandboxOrder = {
        order_no: orderNo,
        partner_order_no: body.partner_order_no,
        status: 'created',
        ...(body.sku === undefined ? {} : { sku: body.sku }),
        ...(body.qty === undefined ? {} : { qty: body.qty }),
        created_at: date.slice(0, 19) + '+08:00',
      };
      orders.set(orderNo, order);
      created.push(orderNo);
      if (created.length > MAX_CREATED) orders.delete(created.shift() as string);
      return order;
    },
  };
}
