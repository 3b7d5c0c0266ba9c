import { parseArgs } from 'node:util';
import { startSandbox } from './sandbox.js';

const usage = `channel-sandbox: a local emulation of the Channel Integration Service

  --port <n>             port to listen on (default 8787; 0 = any free port)
  --host <addr>          address to bind (default 127.0.0.1)
  --ttl <seconds>        lifetime of issued JWTs (default 900)
  --webhook-url <url>    where logistics pushes go
  --webhook-secret <s>   signs pushes (default: unsigned)
  --access-key <ak>      fixed credentials instead of random ones
  --secret-key <sk>
  -h, --help`;

export async function main(argv: string[]): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        port: { type: 'string', default: '8787' },
        host: { type: 'string', default: '127.0.0.1' },
        ttl: { type: 'string', default: '900' },
        'webhook-url': { type: 'string' },
        'webhook-secret': { type: 'string', default: '' },
        'access-key': { type: 'string' },
        'secret-key': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    console.error((error as Error).message + '\n\n' + usage);
    process.exit(2);
  }
  if (values.help) return void console.log(usage);
  const port = Number(values.port);
  const ttl = Number(values.ttl);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return fail('--port must be a whole number from 0 to 65535');
  if (!(ttl > 0)) return fail('--ttl must be a positive number of seconds');
  if ((values['access-key'] === undefined) !== (values['secret-key'] === undefined)) return fail('pass both --access-key and --secret-key, or neither');
  const sandbox = await startSandbox({
    port,
    host: values.host,
    tokenTtlSeconds: ttl,
    webhookUrl: values['webhook-url'],
    webhookSecret: values['webhook-secret'],
    credentials: values['access-key'] ? { accessKey: values['access-key'], secretKey: values['secret-key'] as string } : undefined,
  });
  console.log(`channel-sandbox listening on ${sandbox.url}
  accessKey:  ${sandbox.credentials.accessKey}
  secretKey:  ${sandbox.credentials.secretKey}
  token TTL:  ${ttl} s
  webhook:    ${values['webhook-url'] ?? '(none; pass --webhook-url)'}${values['webhook-secret'] ? ' (signed)' : ' (unsigned)'}
Ctrl+C to stop.`);
  const stop = () => sandbox.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function fail(message: string): void {
  console.error('channel-sandbox: ' + message + '\n\n' + usage);
  process.exit(2);
}
