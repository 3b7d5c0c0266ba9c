// The token call itself: signing, the HTTP request, and reading the answer into a token or a
// TokenExchangeError that says what to check. Everything the call keeps of a failure is redacted.
import { TokenExchangeError } from '../../errors/TokenExchangeError.js';
import { describeIssues, tokenResponseSchema } from '../../schemas/logistics.js';
import { envelopeText, isEnvelope } from '../../shared/envelope.js';
import { messageIn } from '../../shared/message.js';
import { maskTokens } from '../../shared/redact.js';
import { raceSignal } from '../../shared/signal.js';
import { describeAnswer, describeHttpRefusal, describeUnreachable, describeUrlMistake } from './messages.js';
import type { ExchangeTelemetry, ServiceCall } from '../telemetry/exchange-telemetry.js';
import type { SignFunction } from './signing.js';
import type { CachedToken } from './token-cache.js';

/** What a token call needs to know, fixed when the exchange is made. */
export interface TokenCall {
  baseUrl: string;
  /** `baseUrl` + the token path, and its path alone (what is signed). */
  url: string;
  path: string;
  accessKey: string;
  secretKey: string;
  sign: SignFunction;
  fetch: (input: string, init: RequestInit) => Promise<Response>;
  /** Milliseconds from signing to the answer's last byte. */
  timeout: number;
  context: { method: string; url: string };
  /** Cuts the secret key and anything JWT-shaped out of text that goes into an error or report. */
  redact(text: string): string;
  /** Spans and metrics, when the exchange has `telemetry`. */
  telemetry?: ExchangeTelemetry;
}

/** The redaction of {@link TokenCall}: the secret key, then every JWT-shaped run. */
export const redactorFor =
  (secretKey: string) =>
  (text: string): string =>
    maskTokens(text.split(secretKey).join('[secret]'));

/** A thrown value in a token call's message, redacted and short: `TypeError: ...`. */
export const thrownMessage = (call: Pick<TokenCall, 'redact'>, error: unknown): string => call.redact(messageIn({ name: true }, error)).slice(0, 300);

/** One token call: signed, bounded by `call.timeout` from signing to the answer's last byte. */
export function requestToken(call: TokenCall, externalUserId: string): Promise<CachedToken> {
  if (!call.telemetry) return send(call, externalUserId);
  const traced = call.telemetry.service();
  return send(call, externalUserId, traced).then(
    (token) => (traced.end(), token),
    (error: unknown) => {
      traced.end(error);
      throw error;
    },
  );
}

async function send(call: TokenCall, externalUserId: string, traced?: ServiceCall): Promise<CachedToken> {
  const { url, path, timeout, context, redact } = call;
  const body = JSON.stringify({ external_user_id: externalUserId });
  const timer = AbortSignal.timeout(timeout);
  const late = (what: string, status?: number) => {
    if (traced) traced.timedOut = true;
    return new TokenExchangeError('the token endpoint ' + url + ' did not ' + what + ' within ' + timeout + ' ms (timeout)', { ...context, status });
  };
  // Only ever read as `timer.aborted` below.
  const stopped = () => new Error('timeout');
  let headers: Record<string, string>;
  try {
    headers = await raceSignal(
      Promise.resolve(call.sign({ method: 'POST', url, path, body, accessKey: call.accessKey, secretKey: call.secretKey })),
      timer,
      stopped,
      false,
    );
  } catch (error) {
    if (timer.aborted) throw late('get a signed request (the sign function is slow)');
    throw new TokenExchangeError('the sign function failed: ' + thrownMessage(call, error), context);
  }
  let response: Response;
  const sent: Record<string, string> = { ...headers, 'Content-Type': 'application/json' };
  // The W3C header naming the token call's span, so that the service can join the trace.
  if (traced?.traceparent) sent.traceparent = traced.traceparent;
  try {
    response = await raceSignal(call.fetch(url, { method: 'POST', headers: sent, body, signal: timer }), timer, stopped, false);
  } catch (error) {
    if (timer.aborted) throw late('answer');
    throw new TokenExchangeError('could not reach the token endpoint ' + url + ': ' + describeUnreachable(error, url, redact), { ...context, cause: error });
  }
  if (traced) traced.status = response.status;
  let text: string;
  try {
    text = await raceSignal(response.text(), timer, stopped, false);
  } catch (error) {
    if (timer.aborted) throw late('send the whole body of its HTTP ' + response.status + ' answer', response.status);
    throw new TokenExchangeError('could not read the answer of the token endpoint ' + url + ' (HTTP ' + response.status + '): ' + thrownMessage(call, error), {
      ...context,
      status: response.status,
      cause: error,
    });
  }
  return readTokenAnswer(call, response.status, response.ok, text, response.headers.get('content-type'));
}

function readTokenAnswer(call: TokenCall, status: number, ok: boolean, text: string, contentType: string | null): CachedToken {
  const { url, baseUrl, context, redact } = call;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const apiCode = isEnvelope(value) && (typeof value.code === 'number' || typeof value.code === 'string') ? value.code : undefined;
  const said = redact(envelopeText(value)).slice(0, 200);
  const where = { ...context, status, apiCode };
  // Not the service's envelope at all: most likely baseUrl points at something else.
  const foreign = apiCode === undefined ? describeAnswer(text, contentType) : undefined;
  if (!ok) {
    const answered =
      'the token endpoint ' + url + ' answered HTTP ' + status + (apiCode !== undefined ? ' with code ' + apiCode : '') + (said ? ': ' + said : '');
    throw new TokenExchangeError(answered + (foreign ? ' (' + foreign + ')' : '') + '. ' + describeHttpRefusal(status, said, baseUrl), where);
  }
  // "0" as well as 0, as the client entry accepts.
  if (apiCode !== undefined && apiCode !== 0 && apiCode !== '0')
    throw new TokenExchangeError('the token endpoint ' + url + ' answered code ' + apiCode + (said ? ': ' + said : ''), where);
  const parsed = tokenResponseSchema.safeParse(apiCode === '0' ? { ...(value as object), code: 0 } : value);
  if (!parsed.success) {
    const shape = "{ code: 0, data: { access_token, expires_in, token_type: 'Bearer' } }";
    const problem = foreign
      ? 'the answer of ' +
        url +
        ' (HTTP ' +
        status +
        (contentType ? ', ' + contentType.slice(0, 60) : '') +
        ") is not the token endpoint's " +
        shape +
        ': it is ' +
        foreign +
        '. ' +
        describeUrlMistake(baseUrl) +
        '.'
      : 'the token endpoint ' + url + ' answered HTTP ' + status + ' without ' + shape + ': ' + describeIssues(parsed.error.issues).join('; ');
    throw new TokenExchangeError(problem, where);
  }
  const { access_token, expires_in } = parsed.data.data;
  return { accessToken: access_token, expiresIn: expires_in, tokenType: 'Bearer', expiresAt: Date.now() + expires_in * 1000 };
}
