// doctor's service part: a token exchange for a probe user with the partner's keys, signed as
// createTokenExchange signs by default, and what its answer tells: which of access key, secret key
// or signature time is wrong (the sandbox labels its refusals; the service publishes no error
// codes, so against it doctor compares its answer with the one to a made-up access key), and how
// far this machine's clock is from the service's `Date` header.
import { randomBytes } from 'node:crypto';
import { nodeCrypto } from '../../server/crypto/node.js';
import { TOKEN_PATH } from '../../server/tokens/exchange-options.js';
import { REFERENCE_WINDOW_SECONDS, signReference } from '../../server/tokens/signing.js';
import { SANDBOX_CODES } from '../sandbox/sandbox-api.js';
import { call, CERTIFICATE, certificateFix, createReport, describeAnswer, duration, is2xx, safeJson, type Answer, type CheckReport } from './check-report.js';

/** What the service part is given. */
export interface ServiceTarget {
  /** The service's (or the sandbox's) base URL, checked. */
  url: string;
  accessKey?: string;
  secretKey?: string;
  /** The external user id the probe exchange asks a token for. */
  user: string;
}

/** The service part's lines, and what the other parts use of it. */
export interface ServiceResult {
  report: CheckReport<'service'>;
  /** The token the probe got (never printed: doctor masks it). */
  token?: string;
  /** Its answers are the sandbox's (its token's issuer, or its labelled refusal). */
  sandbox: boolean;
  /** The service's clock minus this machine's, in ms, when its answer had a Date header. */
  skewMs?: number;
  /** The keys line failed. */
  keysFailed: boolean;
}

const TIMEOUT_MS = 10_000;
/** Closer than this to the service's clock is fine; past it, a warning that it nears the window. */
const NEAR_MS = 30_000;
const WINDOW_MS = REFERENCE_WINDOW_SECONDS * 1000;

/** The sandbox's labelled refusals of a token request (its own codes: the service publishes none). */
const LABELS: Array<[number, RegExp, 'access-key' | 'signature' | 'time' | 'nonce']> = [
  [SANDBOX_CODES.unknownKey, /^unknown access key$/, 'access-key'],
  [SANDBOX_CODES.badSignature, /^signature mismatch$/, 'signature'],
  [SANDBOX_CODES.staleTimestamp, /^timestamp outside the ±\d+ s window$/, 'time'],
  [SANDBOX_CODES.replayedNonce, /^nonce already used/, 'nonce'],
];

/** The payload of a JWT, or undefined. */
export function jwtPayload(token: string): Record<string, unknown> | undefined {
  const value = safeJson(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

/** ` ak_san…`: enough to tell which key was used, not the key; nothing for a short one. */
const keyHint = (key: string) => (key.length > 8 ? ' ' + key.slice(0, 6) + '…' : '');

/** Runs the service part. */
export async function checkService({ url, accessKey, secretKey, user }: ServiceTarget): Promise<ServiceResult> {
  const r = createReport('service', url);
  const endpoint = url + TOKEN_PATH;
  const path = endpoint.replace(/^https?:\/\/[^/]+/i, '');
  const exchange = async (key: string, secret: string) => {
    const body = JSON.stringify({ external_user_id: user });
    const signed = await signReference(nodeCrypto, { method: 'POST', url: endpoint, path, body, accessKey: key, secretKey: secret });
    const sentAt = Date.now();
    const answer = await call(
      endpoint,
      { method: 'POST', headers: { ...signed, 'content-type': 'application/json', accept: 'application/json' }, body },
      TIMEOUT_MS,
    );
    return { answer, skewMs: skewOf(answer, sentAt) };
  };
  const keysTitle = 'the keys sign a token exchange';
  const clockTitle = "this machine's clock agrees with the service's";
  const result: ServiceResult = { report: undefined as never, sandbox: false, keysFailed: false };

  let refusedFor: 'access-key' | 'signature' | 'time' | 'nonce' | 'unknown' | undefined;
  let answer: Answer;
  if (accessKey === undefined || secretKey === undefined) {
    // No keys: any answer of the service carries its Date.
    const sentAt = Date.now();
    answer = await call(endpoint, { method: 'GET', headers: { accept: 'application/json' } }, TIMEOUT_MS);
    result.skewMs = skewOf(answer, sentAt);
    if (answer.error !== undefined) r.fail('keys', keysTitle, `no answer from ${url}: ${answer.error}`, serviceFixFor(answer.error));
    else r.skip('keys', keysTitle, 'no --access-key and --secret-key (nor CHANNEL_ACCESS_KEY and CHANNEL_SECRET_KEY)');
  } else {
    const probe = await exchange(accessKey, secretKey);
    answer = probe.answer;
    result.skewMs = probe.skewMs;
    const envelope = safeJson(answer.text) as { code?: unknown; message?: unknown; data?: { access_token?: unknown; expires_in?: unknown } } | undefined;
    const token = envelope?.data?.access_token;
    if (answer.error !== undefined) r.fail('keys', keysTitle, `no answer from ${endpoint}: ${answer.error}`, serviceFixFor(answer.error));
    else if (is2xx(answer) && (envelope?.code === 0 || envelope?.code === '0') && typeof token === 'string' && token) {
      result.token = token;
      result.sandbox = jwtPayload(token)?.iss === 'channel-sandbox';
      const ttl = typeof envelope.data?.expires_in === 'number' ? `, valid ${envelope.data.expires_in} s` : '';
      r.pass(
        'keys',
        keysTitle,
        `HTTP ${answer.status} in ${duration(answer.ms)}: a token for "${user}"${ttl}${keyHint(accessKey) && ` (access key${keyHint(accessKey)})`}`,
      );
    } else if (answer.status === 404 || answer.status === 405 || (is2xx(answer) && envelope?.code === undefined)) {
      r.fail(
        'keys',
        keysTitle,
        `${describeAnswer(answer)} from ${endpoint}: not the token endpoint`,
        `pass the service's base URL, without ${TOKEN_PATH} (the sandbox's: http://127.0.0.1:8787)`,
      );
    } else {
      const label = LABELS.find(([code, message]) => envelope?.code === code && typeof envelope.message === 'string' && message.test(envelope.message));
      result.sandbox = label !== undefined;
      refusedFor = label?.[2] ?? 'unknown';
      const refused = `refused: ${describeAnswer(answer)}`;
      if (refusedFor === 'access-key')
        r.fail(
          'keys',
          keysTitle,
          `${refused}: the service does not know the access key${keyHint(accessKey)}`,
          'set CHANNEL_ACCESS_KEY (--access-key) to the access key of your integration (the sandbox prints the pair it accepts)',
        );
      else if (refusedFor === 'signature')
        r.fail(
          'keys',
          keysTitle,
          `${refused}: the access key${keyHint(accessKey)} is known, the signature does not match: the secret key is wrong`,
          'set CHANNEL_SECRET_KEY (--secret-key) to the secret key paired with this access key',
        );
      else if (refusedFor === 'time')
        r.fail(
          'keys',
          keysTitle,
          `${refused}: the access key is known, the signature's time is outside the window (the secret key was not checked): the clock, below`,
          'sync this machine\'s clock (NTP: "timedatectl set-ntp true", chrony), then run doctor again',
        );
      else if (refusedFor === 'nonce') r.fail('keys', keysTitle, `${refused}: a nonce seen before`, 'run doctor again: each request has a fresh nonce');
      else {
        // The service's refusals are not published: compare with its answer to a made-up access key.
        const made = (await exchange('doctor-' + randomBytes(6).toString('hex'), secretKey)).answer;
        const same = answerKind(made) === answerKind(answer);
        const clock =
          result.skewMs === undefined
            ? ''
            : Math.abs(result.skewMs) <= NEAR_MS
              ? `; this machine's clock is within ${Math.ceil(Math.abs(result.skewMs) / 1000)} s of the service's, so the signature's time is not the cause`
              : `; or the signature's time: this machine's clock is ${describeSkew(result.skewMs)} (below)`;
        r.fail(
          'keys',
          keysTitle,
          same
            ? `${refused}, the same answer as to a made-up access key: the access key${keyHint(accessKey)} is probably unknown to the service (or it answers every refusal alike: its error codes are not published, so doctor cannot tell)${clock}`
            : `${refused}; a made-up access key gets ${describeAnswer(made)}, so the service knows this one: the secret key is wrong, or your backend signs another way than the reference scheme doctor uses${clock}`,
          "compare CHANNEL_ACCESS_KEY and CHANNEL_SECRET_KEY with your integration's keys in the partner console; a signing scheme of your own goes to createTokenExchange({ sign }) (doctor signs with the reference scheme)",
        );
      }
    }
  }
  result.keysFailed = r.done().counts.fail > 0;

  // The clock, from the service's Date header.
  const skew = result.skewMs;
  if (skew === undefined)
    r.skip('clock', clockTitle, answer.error !== undefined ? 'no answer to read its Date from' : 'its answer had no Date header to compare with');
  else {
    const off = Math.abs(skew);
    const fix = 'sync this machine\'s clock (NTP: "timedatectl set-ntp true", chrony): past the window every token exchange is refused';
    const distance = `${describeSkew(skew)} (by its Date header${Math.round(off / 1000) > 1 ? ', ±1 s' : ''})`;
    if (off <= NEAR_MS) r.pass('clock', clockTitle, distance);
    else if (off <= WINDOW_MS)
      r.warn('clock', clockTitle, `${distance}: it nears the ±${REFERENCE_WINDOW_SECONDS} s window a signature's time must be within`, fix);
    else if (result.token)
      r.warn(
        'clock',
        clockTitle,
        `${distance}: beyond the reference scheme's ±${REFERENCE_WINDOW_SECONDS} s, yet the exchange was accepted (this service's window is wider)`,
        fix,
      );
    else r.fail('clock', clockTitle, `${distance}: beyond the ±${REFERENCE_WINDOW_SECONDS} s window a signature's time must be within`, fix);
  }
  result.report = r.done();
  return result;
}

const serviceFixFor = (error: string) =>
  error.startsWith(CERTIFICATE)
    ? certificateFix
    : 'pass the base URL of the service (or of a running sandbox: channel-sandbox start) as --service or CHANNEL_BASE_URL';

/** The service's clock minus ours: its Date (whole seconds, so +500 ms) against the middle of the exchange. */
function skewOf(answer: Answer, sentAt: number): number | undefined {
  const date = Date.parse(answer.headers?.get('date') ?? '');
  return Number.isNaN(date) ? undefined : date + 500 - (sentAt + answer.ms / 2);
}

/** `within 1 s`, `600 s behind` (this machine's clock, against the service's). */
function describeSkew(skewMs: number): string {
  const seconds = Math.round(Math.abs(skewMs) / 1000);
  if (seconds <= 1) return 'within 1 s';
  return `${seconds} s ${skewMs > 0 ? 'behind' : 'ahead'}`;
}

/** What tells two refusals apart: the status and the envelope's code (a message may carry a request id). */
function answerKind(answer: Answer): string {
  const code = (safeJson(answer.text) as { code?: unknown } | undefined)?.code;
  return `${answer.status ?? answer.error} ${typeof code === 'number' || typeof code === 'string' ? code : (answer.text ?? '').replace(/[\da-f-]{8,}/gi, '')}`;
}
