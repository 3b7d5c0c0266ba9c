import type { Logistics } from '../schemas/logistics.js';

/** The sandbox's demo orders (its own data; the service's real data shape is in spec §2.3). */
export const demoLogistics: Logistics[] = [
  {
    order_no: 'SO20240601001',
    partner_order_no: 'P-10001',
    shipments: [
      {
        tracking_no: 'SF1234567890',
        express_company: '顺丰速运',
        express_code: 'SF',
        shipment_status: 'in_transit',
        shipped_at: '2024-06-01T10:00:00+08:00',
        events: [
          { time: '2024-06-01T10:00:00+08:00', status: 'collected', desc: '快件已揽收' },
          { time: '2024-06-01T12:00:00+08:00', status: 'in_transit', desc: '快件已发出' },
        ],
      },
    ],
  },
  {
    order_no: 'SO20240602002',
    partner_order_no: 'P-10002',
    shipments: [
      {
        tracking_no: 'YT9876543210',
        express_company: '圆通速递',
        express_code: 'YTO',
        shipment_status: 'delivered',
        shipped_at: '2024-06-02T09:30:00+08:00',
        events: [
          { time: '2024-06-02T09:30:00+08:00', status: 'collected', desc: '已揽件' },
          { time: '2024-06-03T15:20:00+08:00', status: 'delivered', desc: '已签收' },
        ],
      },
    ],
  },
];
