import { httpUrl, sandboxUrl, type Values } from './cli-args.js';
import { CliError, controlClient } from './cli-client.js';
import { clockTime, describeFlags } from '../sandbox/describe-event.js';
import { readAnswer, trimAnswer } from '../http-io.js';

/** `channel-sandbox listen`: takes pushes over an event stream, POSTs each to the local URL, reports the answer. */
export async function listen(values: Values): Promise<void> {
  const forwardTo = values['forward-to'] as string | undefined;
  if (!forwardTo) throw new CliError('listen: where to? channel-sandbox listen --forward-to http://127.0.0.1:3000/webhooks/channel', 2);
  httpUrl(forwardTo, 'listen: --forward-to');
  const base = sandboxUrl(values.sandbox as string | undefined);
  const client = controlClient(base);
  let listenerId = '';
  for await (const { event, data } of client.stream('listen', { forward_to: forwardTo })) {
    if (event === 'ready') {
      listenerId = data.listenerId as string;
      console.log(
        values.json
          ? JSON.stringify({ event: 'ready', forwardTo, sandbox: base })
          : `Ready: pushes from ${base} go to ${forwardTo} (${data.signed ? 'signed' : 'unsigned'}; the receiver has ${data.timeoutMs} ms). Ctrl+C to stop.`,
      );
    } else if (event === 'push') {
      void forward(data as unknown as Delivery).then(async (outcome) => {
        const reported = await client.call('POST', `listen/${listenerId}/result`, { id: data.id, ...outcome }).then(
          () => '',
          (error: Error) => ` (not recorded: ${error.message})`,
        );
        const line = { id: data.id as number, orderNo: data.orderNo as string, ...outcome };
        const answered = outcome.status !== undefined && (outcome.status < 200 || outcome.status > 299) && outcome.answer ? `, answer: ${outcome.answer}` : '';
        console.log(
          values.json
            ? JSON.stringify(line)
            : `${clockTime(Date.now())}  push #${line.id} ${line.orderNo}${describeFlags(data as unknown as Delivery)} → ${forwardTo}: ${outcome.status !== undefined ? `HTTP ${outcome.status}` : `FAILED: ${outcome.error}`} in ${outcome.durationMs} ms${answered}${reported}`,
        );
      });
    }
  }
  throw new CliError(`the sandbox at ${base} closed the stream (stopped?)`);
}

interface Delivery {
  id: number;
  orderNo: string;
  signed: boolean;
  tampered: boolean;
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

async function forward(d: Delivery): Promise<{ status?: number; error?: string; answer?: string; durationMs: number }> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  try {
    const response = await fetch(d.url, { method: 'POST', headers: d.headers, body: d.body, signal: AbortSignal.timeout(d.timeoutMs) });
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
