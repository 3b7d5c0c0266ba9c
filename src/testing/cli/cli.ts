import { parseArgs } from 'node:util';
import { externalUserIdProblem } from '../../server/tokens/exchange-options.js';
import { common, glimpse, httpUrl, optionsOf, positionals, sandboxUrl, wholeNumber, type Values } from './cli-args.js';
import { check } from './cli-check.js';
import { doctor } from './cli-doctor.js';
import { inbox } from './cli-inbox.js';
import { CliError, controlClient } from './cli-client.js';
import { commandHelp, usage } from './cli-help.js';
import { listen } from './cli-listen.js';
import { start } from './cli-start.js';
import { clockTime, describeEvent, describeFailNext } from '../sandbox/describe-event.js';
import type { PushResult, SandboxEvent } from '../sandbox/types.js';

/**
 * Runs the CLI; resolves to the exit code (1: a push that was not delivered, a check that
 * failed), or throws {@link CliError} with a one-line message.
 */
export async function main(argv: string[]): Promise<number> {
  const named = argv[0] !== undefined && !argv[0].startsWith('-');
  const command = named ? argv[0] : 'start';
  if (!optionsOf[command])
    throw new CliError(`unknown command "${command}"; the commands are ${Object.keys(optionsOf).join(', ')} (channel-sandbox --help)`, 2);
  let values: Values;
  let args: string[];
  try {
    ({ values, positionals: args } = parseArgs({
      args: named ? argv.slice(1) : argv,
      options: { ...common, ...optionsOf[command] },
      allowPositionals: true,
    }) as { values: Values; positionals: string[] });
  } catch (error) {
    const option = /'(-[^']*)'/.exec((error as Error).message)?.[1];
    throw new CliError(
      option ? `${command}: unknown or incomplete option ${option} (channel-sandbox ${command} --help)` : `${command}: ${(error as Error).message}`,
      2,
    );
  }
  if (values.help) return (console.log(!named && command === 'start' ? usage + '\n\n' + commandHelp.start : commandHelp[command]), 0);
  if (args.length > (positionals[command] ?? 0))
    throw new CliError(
      `${command}: unexpected argument "${glimpse(args[positionals[command] ?? 0])}" (quote a value with spaces; channel-sandbox ${command} --help)`,
      2,
    );
  if (command === 'start') return start(values).then(() => 0);
  if (command === 'check') return check(args, values);
  if (command === 'inbox') return inbox(args, values);
  if (command === 'doctor') return doctor(values);
  // Arguments are checked before the address is used, so a typo is reported as a typo.
  const base = () => sandboxUrl(values.sandbox as string | undefined);
  const client = { call: (...a: Parameters<ReturnType<typeof controlClient>['call']>) => controlClient(base()).call(...a) };
  const print = (value: Record<string, unknown>, text: string) => (console.log(values.json ? JSON.stringify(value) : text), 0);
  switch (command) {
    case 'expire': {
      const answer = await client.call('POST', 'expire');
      return print(answer, `expired ${answer.expired} token${answer.expired === 1 ? '' : 's'}: every token issued so far now gets 401`);
    }
    case 'fail-next': {
      const count = wholeNumber(args[0] ?? '1', 'fail-next: n', 0, 1000);
      const status = values.status === undefined ? undefined : wholeNumber(values.status as string, 'fail-next: --status', 100, 599);
      const retryAfter = values['retry-after'] === undefined ? undefined : wholeNumber(values['retry-after'] as string, 'fail-next: --retry-after', 0, 3600);
      const answer = await client.call('POST', 'fail-next', { count, status, retryAfter });
      return print(answer, describeFailNext(answer.count as number, answer.status as number));
    }
    case 'push': {
      if (values.to !== undefined) httpUrl(values.to as string, 'push: --to');
      const answer = (await client.call('POST', 'push', {
        order: values.order,
        tamper: values.tamper,
        fresh: values.fresh,
        to: values.to,
      })) as unknown as PushResult;
      print(answer as unknown as Record<string, unknown>, describePush(answer, !!values.tamper));
      // A tampered push went as it should when the receiver answered and refused it.
      const asExpected = values.tamper ? !answer.ok && answer.status !== undefined : answer.ok;
      return asExpected ? 0 : 1;
    }
    case 'stats': {
      const s = await client.call('GET', 'stats');
      const failNext = s.failNext as { count: number; status: number };
      return print(
        s,
        [
          `token calls     ${s.tokenCalls} (issued ${s.tokensIssued}, refused ${s.tokenRejections})`,
          `data calls      ${s.dataCalls} (401: ${s.unauthorized})`,
          `pushes          ${s.pushes} (failed ${s.pushFailures})`,
          `token lifetime  ${s.tokenTtlSeconds} s`,
          `fail-next       ${failNext.count ? `${failNext.count} more answer ${failNext.status}` : 'none pending'}`,
          `webhook URL     ${s.webhookUrl ?? '(none)'}`,
          `listeners       ${(s.listeners as string[]).join(', ') || '(none)'}`,
        ].join('\n'),
      );
    }
    case 'token': {
      if (args[0] === undefined) throw new CliError('token: which user? channel-sandbox token <user>', 2);
      const problem = externalUserIdProblem(args[0]);
      if (problem) throw new CliError('token: the user id ' + problem, 2);
      const answer = await client.call('POST', 'token', { user: args[0] });
      return print(answer, answer.access_token as string);
    }
    case 'ttl': {
      if (args[0] === undefined) throw new CliError('ttl: how many seconds? channel-sandbox ttl 60', 2);
      const answer = await client.call('POST', 'ttl', { seconds: wholeNumber(args[0], 'ttl: seconds', 1, 86_400) });
      return print(answer, `tokens issued from now on live ${answer.tokenTtlSeconds} s (tokens already issued keep theirs)`);
    }
    case 'events':
      for await (const { data } of controlClient(base()).stream(values.all ? 'events?since=0' : 'events')) {
        const event = data as unknown as SandboxEvent;
        console.log(values.json ? JSON.stringify(event) : `${clockTime(event.at)}  ${describeEvent(event)}`);
      }
      throw new CliError(`the sandbox at ${base()} closed the stream (stopped?)`);
    case 'listen':
      return listen(values).then(() => 0);
  }
  return 0;
}

export function describePush(p: PushResult, tampered: boolean): string {
  const outcome = !p.ok ? `FAILED: ${p.error}` : p.duplicate ? `duplicate, HTTP ${p.status}` : `delivered, HTTP ${p.status}`;
  const line = `push #${p.id} ${p.orderNo}${tampered ? ' (tampered after signing)' : ''} → ${p.url}${p.via === 'listener' ? ' (through channel-sandbox listen)' : ''}: ${outcome} in ${p.durationMs} ms`;
  const lines = [line];
  const again = p.repeatOf === undefined ? 'the same bytes as an earlier push' : `the same bytes as push #${p.repeatOf}`;
  if (p.duplicate) lines.push(`  the receiver had this push already (${again}) and did not run it again: --fresh pushes a new snapshot of the order`);
  else if (p.ok && p.repeatOf !== undefined && !tampered)
    lines.push(`  ${again}: a receiver that deduplicates acknowledges it without running it again (--fresh pushes a new snapshot of the order)`);
  if (!p.ok && p.answer) lines.push(`  answer: ${p.answer}`);
  if (tampered && p.ok)
    lines.push('  your receiver accepted a body altered after signing: verify X-Channel-Webhook-Signature over the raw body (createWebhookHandler does)');
  else if (tampered && p.status !== undefined) lines.push('  refused, as it should be: the body was altered after signing');
  return lines.join('\n');
}
