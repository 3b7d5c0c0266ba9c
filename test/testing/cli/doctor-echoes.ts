// The echoes of a secret the leaky-* routes of doctor-backend.ts answer with, for the test to look for.
/** What doctor-backend.ts's leaky-* routes answer for a request's cookie (leaky-cut's receiver: for the webhook secret). */
export const echoes: Record<string, (cookie: string) => string> = {
  cut: (cookie) => 'x'.repeat(80) + ' no session for ' + cookie,
  url: (cookie) => 'no session for ' + encodeURIComponent(cookie),
  hex: (cookie) => 'no session for ' + Buffer.from(cookie).toString('hex'),
  'base64-0': (cookie) => 'no session for ' + Buffer.from(cookie).toString('base64'),
  'base64-1': (cookie) => 'no session for ' + Buffer.from('a' + cookie).toString('base64'),
  'base64-2': (cookie) => 'no session for ' + Buffer.from('ab' + cookie + '!').toString('base64url'),
};
