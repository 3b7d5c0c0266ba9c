import { isChannelError } from '../../errors/ChannelError.js';
import type { CheckReport } from '../check/check-report.js';
import { checkTokenRoute, checkWebhook, formatCheckReport } from '../check/checks.js';
import { headersFrom, httpUrl, sandboxUrl, type Values } from './cli-args.js';
import { CliError } from './cli-client.js';

/** `channel-sandbox check token-route|webhook <url>`: one line per check; exit 1 on any ✗. */
export async function check(args: string[], values: Values): Promise<number> {
  const [target, url] = args;
  const targets = ['token-route', 'webhook'];
  if (!targets.includes(target))
    throw new CliError(`check: what? channel-sandbox check token-route <url> or channel-sandbox check webhook <url>${target ? ` (not "${target}")` : ''}`, 2);
  if (url === undefined)
    throw new CliError(
      `check ${target}: which URL? e.g. channel-sandbox check ${target} http://127.0.0.1:3000/${target === 'webhook' ? 'webhooks/channel' : 'channel-token'}`,
      2,
    );
  httpUrl(url, `check ${target}: the URL`);
  let report: CheckReport;
  if (target === 'token-route') {
    if (values.secret !== undefined) throw new CliError('check token-route: --secret is for check webhook', 2);
    const headers = headersFrom(values.header as string[] | undefined, 'check token-route');
    report = await asCliError(checkTokenRoute({ url, sandbox: sandboxUrl(values.sandbox as string | undefined), headers }));
  } else {
    if (values.header !== undefined) throw new CliError('check webhook: --header is for check token-route (the service sends only its own headers)', 2);
    if (values.sandbox !== undefined) throw new CliError('check webhook: --sandbox is not used (the check sends the pushes itself, signed with --secret)', 2);
    const secret = (values.secret as string | undefined) || process.env.CHANNEL_WEBHOOK_SECRET;
    if (!secret)
      throw new CliError(
        'check webhook: which secret does your receiver verify with? pass --secret whsec_… (the --webhook-secret of channel-sandbox start) or set CHANNEL_WEBHOOK_SECRET',
        2,
      );
    report = await asCliError(checkWebhook({ url, secret }));
  }
  console.log(values.json ? JSON.stringify(report) : formatCheckReport(report));
  return report.ok ? 0 : 1;
}

/** A ConfigError from the Node API, as the CLI's one line. */
function asCliError<T>(pending: Promise<T>): Promise<T> {
  return pending.catch((error: unknown) => {
    throw isChannelError(error) ? new CliError(error.message.replace(/^\[channel-sdk\] /, '')) : error;
  });
}
