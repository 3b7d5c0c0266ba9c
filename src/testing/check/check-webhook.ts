import { checkKeys, fail } from '../../shared/check.js';
import {
  CERTIFICATE,
  certificateFix,
  createReport,
  describeAnswer,
  duration,
  httpUrl,
  is2xx,
  median,
  redirectOf,
  type Answer,
  type CheckReport,
} from './check-report.js';
import { createProbe, receiverErrorFix, SIGNATURE_HEADER, WINDOW_MS } from './webhook-probe.js';
import { checkRepeat } from './webhook-repeat.js';

export { SIGNATURE_HEADER } from './webhook-probe.js';

/** Options of {@link checkWebhook}. */
export interface WebhookCheckOptions {
  /** Your running app's webhook route, e.g. `http://127.0.0.1:3000/webhooks/channel`. */
  url: string;
  /** The webhook signing secret your receiver verifies with (the sandbox's `webhookSecret`). */
  secret: string;
  /**
   * How many times your callback has had its effect so far (rows saved, messages queued):
   * read before and after a repeated push, so that "the callback ran once" is checked exactly.
   * Without it a repeat answered 2xx like a new push is a warning (not visible from outside).
   */
  effects?: () => number | Promise<number>;
}

const OPTION_KEYS = ['url', 'secret', 'effects'];
const SLOW_MS = WINDOW_MS / 2;
const ONE_MIB = 1024 * 1024;

/**
 * Checks your running webhook receiver against the push contract, from outside, as
 * `channel-sandbox check webhook <url>` does: a signed push gets 2xx within 8 s; upper-case
 * hex is accepted; tampered, unsigned and malformed signatures are refused; the signature is
 * checked over the raw bytes; a repeated push has its effect once; a 1 MiB push is accepted.
 * Every push is a `logistics.updated` for the sandbox's demo order SO20240601001 with a
 * tracking event `channel-sandbox check …`: point it at a test database.
 * @example
 * const report = await checkWebhook({ url: app + '/webhooks/channel', secret: 'whsec_test', effects: () => saved.length });
 */
export async function checkWebhook(options: WebhookCheckOptions): Promise<CheckReport> {
  if (typeof options !== 'object' || options === null) fail('checkWebhook needs { url, secret }');
  checkKeys(options, OPTION_KEYS, 'checkWebhook option');
  const url = httpUrl(options.url, 'url');
  const { secret, effects } = options;
  if (typeof secret !== 'string' || secret === '')
    fail('secret: the webhook secret your receiver verifies with is required (the --webhook-secret of channel-sandbox start)');
  if (effects !== undefined && typeof effects !== 'function')
    fail('effects must be a function returning how many times your callback has had its effect, e.g. () => saved.length');
  const count = async (): Promise<number | undefined> => {
    if (!effects) return undefined;
    const value = await effects();
    if (typeof value !== 'number' || !Number.isFinite(value)) fail('effects() must return a number; it returned ' + typeof value);
    return value;
  };

  const r = createReport('webhook', url);
  const { fresh, sign, push, timed, times, late } = createProbe(url, secret);
  const acceptFix = (answer: Answer): string => {
    if (answer.error !== undefined)
      return answer.error.startsWith('no answer')
        ? 'answer within 8 s: acknowledge first and do the work in the background (enqueue, then return 2xx)'
        : answer.error.startsWith(CERTIFICATE)
          ? certificateFix
          : 'start your app and pass the URL of its webhook route';
    if (answer.status === 401 || answer.status === 403)
      return 'check that your receiver verifies with this secret (--secret / CHANNEL_WEBHOOK_SECRET), HMAC-SHA256 over the raw body, hex in either case';
    if (answer.status === 413) return "accept bodies up to 1 MiB (express.raw({ limit: '1mb' }), Fastify bodyLimit…): pushes can be that large";
    if (answer.status === 400 || answer.status === 422)
      return "accept the documented body { event: 'logistics.updated', logistics: { order_no, shipments } } (createWebhookHandler does)";
    const redirect = redirectOf(answer, url);
    if (redirect)
      return redirect.moved
        ? `your receiver moved: the service follows no redirect; give it the URL this one redirects to (${redirect.to}), in your integration configuration and as --webhook-url`
        : `your receiver redirects to ${redirect.to} (a sign-in page?): the service follows no redirect and sends no session; keep the webhook route out of your sign-in`;
    if (answer.status === 404 || answer.status === 405)
      return 'nothing takes POST at this path: pass the URL where your app mounts its webhook route (the recipes: /webhooks/channel)';
    return receiverErrorFix(answer.text) ?? "look at your app's log: the receiver failed on a valid push";
  };

  // 1. A signed push, as the service sends it (lower-case hex).
  const signedBody = fresh();
  const signed = timed(await push(signedBody, sign(signedBody)), 'signed push');
  const acceptedOne = is2xx(signed);
  const unreachable = signed.error !== undefined && !signed.error.startsWith('no answer');
  const skipAll = (ids: Array<[string, string]>, why: string) => ids.forEach(([id, title]) => r.skip(id, title, why));
  if (unreachable) {
    r.fail('signed', 'a signed push gets 2xx', describeAnswer(signed), acceptFix(signed));
    skipAll(
      [
        ['uppercase-hex', 'an upper-case hex signature is accepted'],
        ['tampered', 'a body altered after signing is refused'],
        ['unsigned', 'a push without a signature is refused'],
        ['bad-signatures', 'wrong, truncated, empty and non-hex signatures are refused'],
        ['raw-bytes', 'the signature is checked over the raw bytes'],
        ['duplicate', 'the same push twice has its effect once'],
        ['large', 'a 1 MiB push gets 2xx'],
        ['timing', 'answers within the 8 s window'],
      ],
      'no receiver to check',
    );
    return r.done();
  }
  // 3. What must be refused, sent at once (each is refused before any work, or it is a finding),
  // before 2: they tell a secret mismatch from other refusals of the signed push.
  const tamperedBody = fresh();
  const unsignedBody = fresh();
  const bad = (): [string, string] => {
    const body = fresh();
    return [body, sign(body)];
  };
  const [wrongBody] = bad();
  const [emptyBody] = bad();
  const [shortBody, shortSignature] = bad();
  const [nonHexBody] = bad();
  const [junkBody, junkSignature] = bad();
  const pretty = JSON.stringify(JSON.parse(fresh()), null, 2);
  const [tampered, unsigned, wrong, empty, short, nonHex, junk, reserialised] = await Promise.all([
    push(tamperedBody.replace('"order_no":"', '"order_no":"X'), sign(tamperedBody)),
    push(unsignedBody, undefined),
    push(wrongBody, sign(wrongBody, secret + '-not-the-secret')),
    push(emptyBody, ''),
    push(shortBody, shortSignature.slice(0, 32)),
    push(nonHexBody, 'g'.repeat(64)),
    push(junkBody, junkSignature + 'zz'),
    push(pretty, sign(JSON.stringify(JSON.parse(pretty)))),
  ]);
  // 1, reported now that the refusals are known: a push signed with this secret refused like
  // the unsigned and tampered ones means the receiver verifies with another secret.
  const refusedAlike = !acceptedOne && (signed.status === 401 || signed.status === 403) && [tampered, unsigned, wrong].every((a) => a.status === signed.status);
  if (acceptedOne) r.pass('signed', 'a signed push gets 2xx', `HTTP ${signed.status} in ${duration(signed.ms)}`);
  else if (refusedAlike)
    r.fail(
      'signed',
      'a signed push gets 2xx',
      `${describeAnswer(signed)}: a push signed with this secret is refused like an unsigned or tampered one: your receiver verifies with another secret`,
      'give your receiver the webhook secret of your integration configuration, the one checked here (--webhook-secret, CHANNEL_WEBHOOK_SECRET); while rotating, accept both: createWebhookHandler({ secret: [current, previous] })',
    );
  else r.fail('signed', 'a signed push gets 2xx', describeAnswer(signed), acceptFix(signed));
  const notAccepting = acceptedOne ? '' : 'a correctly signed push was not accepted (above)';

  // 2. Upper-case hex: the spec allows either case.
  if (notAccepting) r.skip('uppercase-hex', 'an upper-case hex signature is accepted', notAccepting);
  else {
    const body = fresh();
    const upper = timed(await push(body, sign(body).toUpperCase()), 'upper-case hex');
    if (is2xx(upper)) r.pass('uppercase-hex', 'an upper-case hex signature is accepted', `HTTP ${upper.status} in ${duration(upper.ms)}`);
    else
      r.fail(
        'uppercase-hex',
        'an upper-case hex signature is accepted',
        `refused: ${describeAnswer(upper)}`,
        'compare the hex case-insensitively: the service may send upper or lower case (verifyWebhookSignature and createWebhookHandler accept both)',
      );
  }

  const refusedLine = (id: string, title: string, answer: Answer, what: string, fix: string) => {
    if (answer.error !== undefined) r.fail(id, title, `${what}: ${answer.error}`, 'refuse a bad signature at once, before any work, within 8 s');
    else if (is2xx(answer)) r.fail(id, title, `${what} was accepted: HTTP ${answer.status}`, fix);
    else r.pass(id, title, `HTTP ${answer.status}`);
  };
  const verifyFix = `verify ${SIGNATURE_HEADER}: HMAC-SHA256 of the raw body with your webhook secret, compared in constant time, before using the body (createWebhookHandler / verifyWebhookSignature do)`;
  refusedLine('tampered', 'a body altered after signing is refused', tampered, 'a body altered after signing', verifyFix);
  refusedLine(
    'unsigned',
    'a push without a signature is refused',
    unsigned,
    `a push without ${SIGNATURE_HEADER}`,
    `refuse a push without ${SIGNATURE_HEADER} whenever a secret is configured (never accept unsigned pushes)`,
  );
  const variants: Array<[string, Answer]> = [
    ['signed with another secret', wrong],
    ['an empty signature', empty],
    ['the first 32 of the 64 hex digits', short],
    ['64 characters that are not hex', nonHex],
  ];
  const badTitle = 'wrong, truncated, empty and non-hex signatures are refused';
  const taken = variants.filter(([, a]) => is2xx(a)).map(([what, a]) => `${what} (HTTP ${a.status})`);
  const silent = variants.filter(([, a]) => a.error !== undefined).map(([what, a]) => `${what}: ${a.error}`);
  if (taken.length)
    r.fail(
      'bad-signatures',
      badTitle,
      'accepted: ' + taken.join('; '),
      'accept exactly 64 hex digits (either case) equal to the HMAC-SHA256 of the raw body; compare all of them (createWebhookHandler / verifyWebhookSignature do)',
    );
  else if (silent.length) r.fail('bad-signatures', badTitle, silent.join('; '), 'refuse a bad signature at once, before any work, within 8 s');
  else if (is2xx(junk)) {
    r.warn(
      'bad-signatures',
      badTitle,
      `all refused (HTTP ${[...new Set(variants.map(([, a]) => a.status))].join(', ')}), but the right signature followed by "zz" was accepted`,
      'check that the header is exactly 64 hex digits (/^[0-9a-f]{64}$/i) before decoding it: Buffer.from(hex, "hex") stops at the first non-hex character',
    );
  } else r.pass('bad-signatures', badTitle, `HTTP ${[...new Set(variants.map(([, a]) => a.status))].join(', ')}`);

  // 4. The raw bytes: the same JSON with other whitespace, signed as sent (accept) and signed as re-serialised (refuse).
  const rawTitle = 'the signature is checked over the raw bytes';
  if (notAccepting) r.skip('raw-bytes', rawTitle, notAccepting);
  else {
    const body = JSON.stringify(JSON.parse(fresh()), null, 2);
    const asSent = timed(await push(body, sign(body)), 're-formatted push');
    const rawFix =
      'verify the body exactly as received, before parsing it, never JSON.stringify(req.body): mount the webhook route before any JSON body parser, or read it raw (express.raw({ type: "application/json" }), await request.text())';
    const reserialisedTaken = is2xx(reserialised);
    if (is2xx(asSent) && !reserialisedTaken && reserialised.error === undefined) {
      r.pass(
        'raw-bytes',
        rawTitle,
        `the same JSON with other whitespace: HTTP ${asSent.status} signed as sent, HTTP ${reserialised.status} signed as re-serialised`,
      );
    } else if (!is2xx(asSent)) {
      r.fail(
        'raw-bytes',
        rawTitle,
        `refused the same JSON with other whitespace signed over its exact bytes (${describeAnswer(asSent)})${reserialisedTaken ? ', and accepted it signed over the re-serialised JSON: the receiver verifies a re-serialised body' : ''}`,
        rawFix,
      );
    } else if (reserialisedTaken) {
      r.fail('raw-bytes', rawTitle, `accepted a body whose signature matches only its re-serialised JSON (HTTP ${reserialised.status})`, rawFix);
    } else
      r.fail(
        'raw-bytes',
        rawTitle,
        `a body signed over its re-serialised JSON: ${reserialised.error}`,
        'refuse a bad signature at once, before any work, within 8 s',
      );
  }

  // 5. The same push twice: its effect once.
  const dupTitle = 'the same push twice has its effect once';
  if (notAccepting) r.skip('duplicate', dupTitle, notAccepting);
  else await checkRepeat({ r, fresh, sign, push, timed, count, acceptFix }, dupTitle);

  // 6. A 1 MiB push.
  const largeTitle = 'a 1 MiB push gets 2xx';
  if (notAccepting) r.skip('large', largeTitle, notAccepting);
  else {
    const body = fresh(ONE_MIB);
    const large = timed(await push(body, sign(body)), '1 MiB push');
    if (is2xx(large)) r.pass('large', largeTitle, `${Buffer.byteLength(body).toLocaleString('en')} bytes: HTTP ${large.status} in ${duration(large.ms)}`);
    else r.fail('large', largeTitle, `${Buffer.byteLength(body).toLocaleString('en')} bytes: ${describeAnswer(large)}`, acceptFix(large));
  }

  // 7. Time against the service's 8 s window.
  const timingTitle = 'answers within the 8 s window';
  const slowest = times.reduce((a, b) => (b[0] > a[0] ? b : a), [0, ''] as [number, string]);
  const summary = times.length
    ? `slowest ${duration(slowest[0])} (${slowest[1]}), median ${duration(median(times.map((t) => t[0])))} over ${times.length} correctly signed ${times.length === 1 ? 'push' : 'pushes'}`
    : '';
  if (late.length)
    r.fail(
      'timing',
      timingTitle,
      `no answer within 8 s: ${late.join(', ')}${summary ? '; ' + summary : ''}`,
      'answer within 8 s: the service then records a failure. Acknowledge first and do the work in the background (enqueue, then return 2xx)',
    );
  else if (slowest[0] >= SLOW_MS)
    r.warn('timing', timingTitle, summary, "the service's network adds its own delay to this: acknowledge first and do the work in the background");
  else if (times.length) r.pass('timing', timingTitle, summary);
  else r.skip('timing', timingTitle, notAccepting || 'no push was accepted');
  return r.done();
}
