import { httpUrl, sandboxUrl, type Values } from './cli-args.js';
import { CliError, controlClient } from './cli-client.js';
import { clockTime, describeFlags } from '../sandbox/describe-event.js';
import { readAnswer, trimAnswer } from '../http-io.js';
import { SIGNATURE_HEADER } from '../../server/webhooks/signature-header.js';

// The headers a push is forwarded with: its content type and its signature, as the sandbox
// signed them. Nothing else the event names is sent, and it goes to --forward-to only: before,
// the CLI POSTed to the URL and headers in the event, so a hostile sandbox had it send pushes
// (with headers of its choosing) to an internal address while it printed --forward-to.
const FORWARDED_HEADERS = ['content-type', SIGNATURE_HEADER];
/** How long a receiver may take, at most, whatever the sandbox says (its own window is 8 s). */
const MAX_TIMEOUT_MS = 60_000;

/** `channel-sandbox listen`: takes pushes over an event stream, POSTs each to --forward-to, reports the answer. */
export async function listen(values: Values): Promise<void> {
  const forwardTo = values['forward-to'] as string | undefined;
  if (!forwardTo) throw new CliError('listen: where to? channel-sandbox listen --forward-to http://127.0.0.1:3000/webhooks/channel', 2);
  httpUrl(forwardTo, 'listen: --forward-to');
  const base = sandboxUrl(values.sandbox as string | undefined);
  const client = controlClient(base);
  let listenerId = '';
  for await (const { event, data } of client.stream('listen', { forward_to: forwardTo })) {
    if (event === 'ready') {
      listenerId = typeof data.listenerId === 'string' ? data.listenerId : '';
      const timeoutMs = timeoutOf(data.timeoutMs);
      console.log(
        values.json
          ? JSON.stringify({ event: 'ready', forwardTo, sandbox: base })
          : `Ready: pushes from ${base} go to ${forwardTo} (${data.signed === false ? 'unsigned' : 'signed'}; the receiver has ${timeoutMs} ms). Ctrl+C to stop.`,
      );
    } else if (event === 'push') {
      const push = deliveryOf(data);
      if (!push) {
        console.error(`ignored a push event that is not a push (no whole-number id, or no text body): is ${base} a channel-sandbox?`);
        continue;
      }
      void forward(forwardTo, push).then(async (outcome) => {
        const reported = await client.call('POST', `listen/${encodeURIComponent(listenerId)}/result`, { id: push.id, ...outcome }).then(
          () => '',
          (error: Error) => ` (not recorded: ${error.message})`,
        );
        const line = { id: push.id, orderNo: push.orderNo, ...outcome };
        const answered = outcome.status !== undefined && (outcome.status < 200 || outcome.status > 299) && outcome.answer ? `, answer: ${outcome.answer}` : '';
        console.log(
          values.json
            ? JSON.stringify(line)
            : `${clockTime(Date.now())}  push #${line.id} ${line.orderNo}${describeFlags(push)} → ${forwardTo}: ${outcome.status !== undefined ? `HTTP ${outcome.status}` : `FAILED: ${outcome.error}`} in ${outcome.durationMs} ms${answered}${reported}`,
        );
      });
    }
  }
  throw new CliError(`the sandbox at ${base} closed the stream (stopped?)`);
}

/** A push as the CLI forwards it: what it takes from the event, checked. */
interface Delivery {
  id: number;
  /** For the printed line only: printable characters, at most 100. */
  orderNo: string;
  signed: boolean;
  tampered: boolean;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

const timeoutOf = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) && value >= 1 ? Math.min(value, MAX_TIMEOUT_MS) : 8000);

/** The push a `push` event carries, or undefined when it is not one. */
function deliveryOf(data: Record<string, unknown>): Delivery | undefined {
  const { id, body } = data;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || typeof body !== 'string') return undefined;
  const given = typeof data.headers === 'object' && data.headers !== null ? (data.headers as Record<string, unknown>) : {};
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    const lower = name.toLowerCase();
    if (FORWARDED_HEADERS.includes(lower) && typeof value === 'string' && !/[\r\n\0]/.test(value)) headers[lower] = value;
  }
  headers['content-type'] ??= 'application/json';
  return {
    id,
    orderNo: String(data.orderNo ?? '')
      .replace(/\p{Cc}/gu, '')
      .slice(0, 100),
    signed: data.signed === true,
    tampered: data.tampered === true,
    headers,
    body,
    timeoutMs: timeoutOf(data.timeoutMs),
  };
}

async function forward(url: string, d: Delivery): Promise<{ status?: number; error?: string; answer?: string; durationMs: number }> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  try {
    // A redirect is the receiver's answer, as the service would see it: not followed elsewhere.
    const response = await fetch(url, { method: 'POST', headers: d.headers, body: d.body, redirect: 'manual', signal: AbortSignal.timeout(d.timeoutMs) });
    const answer = trimAnswer(await readAnswer(response));
    return { status: response.status, ...(answer === undefined ? {} : { answer }), durationMs: took() };
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') return { error: `timeout after ${d.timeoutMs} ms`, durationMs: took() };
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return {
      error: 'connection failed: ' + (cause?.code === 'ECONNREFUSED' ? 'connection refused' : (cause?.message ?? (error as Error).message)),
      durationMs: took(),
    };
  }
}
