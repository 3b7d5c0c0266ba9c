import type { Logistics, Shipment } from '../../schemas/logistics.js';

type Event = [time: string, status: string, desc: string];

/** One order with one shipment, its tracking events listed oldest first. */
function order(orderNo: string, partnerOrderNo: string, shipment: Omit<Shipment, 'events'>, events: Event[]): Logistics {
  return {
    order_no: orderNo,
    partner_order_no: partnerOrderNo,
    shipments: [{ ...shipment, events: events.map(([time, status, desc]) => ({ time, status, desc })) }],
  };
}

/** The sandbox's demo orders (its own data, in the shape of the service's logistics object: src/schemas/logistics.ts). */
export const demoLogistics: Logistics[] = [
  order(
    'SO20240601001',
    'P-10001',
    { tracking_no: 'SF1234567890', express_company: '顺丰速运', express_code: 'SF', shipment_status: 'in_transit', shipped_at: '2024-06-01T10:00:00+08:00' },
    [
      ['2024-06-01T10:00:00+08:00', 'collected', '快件已揽收'],
      ['2024-06-01T12:00:00+08:00', 'in_transit', '快件已发出'],
    ],
  ),
  order(
    'SO20240602002',
    'P-10002',
    { tracking_no: 'YT9876543210', express_company: '圆通速递', express_code: 'YTO', shipment_status: 'delivered', shipped_at: '2024-06-02T09:30:00+08:00' },
    [
      ['2024-06-02T09:30:00+08:00', 'collected', '已揽件'],
      ['2024-06-03T15:20:00+08:00', 'delivered', '已签收'],
    ],
  ),
];
