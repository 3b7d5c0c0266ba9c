import { httpUrl, wholeNumber, type Values } from './cli-args.js';
import { CliError } from './cli-client.js';
import { clockTime, describeEvent } from '../sandbox/describe-event.js';
import { startSandbox } from '../sandbox/sandbox.js';

/** `channel-sandbox start`: runs a sandbox until Ctrl+C and prints what happens. */
export async function start(values: Values): Promise<void> {
  const port = wholeNumber(values.port as string, '--port', 0, 65535);
  const ttl = Number(values.ttl);
  if (!(ttl > 0) || !Number.isFinite(ttl)) throw new CliError('--ttl must be a positive number of seconds', 2);
  if ((values['access-key'] === undefined) !== (values['secret-key'] === undefined))
    throw new CliError('pass both --access-key and --secret-key, or neither', 2);
  if (!['loopback', 'any', 'off'].includes(values.control as string)) throw new CliError('--control must be loopback, any or off', 2);
  const controlHosts = ((values['control-host'] as string[] | undefined) ?? []).map((name) => name.trim());
  for (const name of controlHosts)
    if (!/^[a-z0-9.-]+$/i.test(name))
      throw new CliError(`--control-host must be a host name such as sandbox.ci.internal (no scheme, no port); got "${name}"`, 2);
  if (values['webhook-url'] !== undefined) httpUrl(values['webhook-url'] as string, '--webhook-url');
  const offset = clockOffset(values['clock-offset'] as string | undefined);
  const sandbox = await startSandbox({
    port,
    host: values.host as string,
    tokenTtlSeconds: ttl,
    webhookUrl: values['webhook-url'] as string | undefined,
    webhookSecret: values['webhook-secret'] as string,
    controlApi: values.control as 'loopback' | 'any' | 'off',
    controlHosts,
    credentials: values['access-key'] ? { accessKey: values['access-key'] as string, secretKey: values['secret-key'] as string } : undefined,
    now: offset ? () => Date.now() + offset * 1000 : undefined,
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE')
      throw new CliError(
        `port ${port} is in use (a sandbox already running? try \`channel-sandbox stats\`); pick another with --port, or --port 0 for any free one`,
      );
    throw new CliError(`cannot listen on ${values.host}:${port}: ${error.message}`);
  });
  const webhook = values['webhook-url'] ?? 'none: a push needs --to URL or a running `channel-sandbox listen`';
  if (values.json) {
    const { accessKey, secretKey } = sandbox.credentials;
    console.log(
      JSON.stringify({
        event: 'ready',
        url: sandbox.url,
        accessKey,
        secretKey,
        tokenTtlSeconds: ttl,
        webhookUrl: values['webhook-url'] ?? null,
        signed: !!values['webhook-secret'],
        ...(offset ? { clockOffsetSeconds: offset } : {}),
      }),
    );
  } else {
    console.log(`channel-sandbox listening on ${sandbox.url}
  accessKey:  ${sandbox.credentials.accessKey}
  secretKey:  ${sandbox.credentials.secretKey}
  token TTL:  ${ttl} s
  webhook:    ${webhook}
  pushes are ${values['webhook-secret'] ? 'signed with the webhook secret' : 'unsigned (no --webhook-secret)'}${offset ? `\n  clock:      ${Math.abs(offset)} s ${offset > 0 ? 'ahead of' : 'behind'} this machine's (--clock-offset)` : ''}
  control:    ${values.control === 'off' ? 'off' : `channel-sandbox expire | fail-next | push | listen | events --sandbox ${sandbox.url}`}
Ctrl+C to stop.`);
  }
  if (!values.quiet) sandbox.subscribe((event) => console.log(values.json ? JSON.stringify(event) : `${clockTime(event.at)}  ${describeEvent(event)}`));
  const stop = () => sandbox.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** `--clock-offset` in whole seconds (negative: behind), within a year either way; 0 when not given. */
function clockOffset(text: string | undefined): number {
  if (text === undefined) return 0;
  const value = Number(text);
  if (!/^[+-]?\d+$/.test(text.trim()) || Math.abs(value) > 31_536_000)
    throw new CliError(`--clock-offset must be whole seconds from -31536000 to 31536000, e.g. 600 or --clock-offset=-600; got "${text}"`, 2);
  return value;
}
