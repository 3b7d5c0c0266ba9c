/**
 * The sandbox's own data routes. The interface names SDK data calls (orders, logistics) but
 * not their paths: these are the sandbox's, for demos and tests.
 */
export const SANDBOX_PATHS = {
  /** `GET` lists the orders; `POST` with `{ partner_order_no, sku?, qty? }` creates one. */
  orders: '/open/api/v1/sdk/orders',
  /** `GET …/orders/{order_no}`: one order. */
  order: '/open/api/v1/sdk/orders/{order_no}',
  /** `GET …/logistics?order_no=SO20240601001`: an order's logistics (the same object a push carries). */
  logistics: '/open/api/v1/sdk/logistics',
  /** Any method: answers `{ method, body }`, the body as received. */
  echo: '/open/api/v1/sdk/echo',
  /** `POST` a photo (multipart, one file part, up to 10 MiB): answers `{ id, url, size, sha256, … }` (the README's files example). */
  photos: '/open/api/v1/sdk/photos',
  /** `GET …/photos/{id}`: the bytes of an uploaded photo, as received. */
  photo: '/open/api/v1/sdk/photos/{id}',
  /** `GET …/invoices/{order_no}`: an order's invoice, a one-page PDF (the README's files example). */
  invoice: '/open/api/v1/sdk/invoices/{order_no}',
} as const;

/**
 * Error codes the sandbox answers with. The interface does not publish error bodies or
 * non-zero codes: these are the sandbox's own stand-ins, listed in the README.
 */
export const SANDBOX_CODES = {
  badRequest: 40001,
  invalidUserId: 40002,
  unauthorized: 40100,
  badSignature: 40101,
  staleTimestamp: 40102,
  replayedNonce: 40103,
  unknownKey: 40104,
  notFound: 40400,
  methodNotAllowed: 40500,
  tooLarge: 41300,
  /** A data call refused by `failNext` with 401. Other statuses answer `status * 100 + 90` (e.g. 50390). */
  failNext: 40190,
} as const;
