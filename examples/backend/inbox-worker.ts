// A worker (as many processes as you like): runs your code for each stored push, at least once, so
// keep it idempotent (an upsert). A push that fails is retried with backoff, then kept as a dead
// letter; SIGTERM finishes what runs and exits.
import { startWorker } from './webhook-inbox.js';

startWorker(async (logistics) => {
  // Your database write, e.g. INSERT ... ON CONFLICT (order_no) DO UPDATE SET logistics = $2
  console.log('saved', logistics.order_no, logistics.shipments.map((shipment) => shipment.shipment_status).join(', '));
});
console.log('worker started');
