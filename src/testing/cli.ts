import { parseArgs, type ParseArgsConfig } from 'node:util';
import { isChannelError } from '../errors/ChannelError.js';
import { externalUserIdProblem } from '../server/tokens/exchange-options.js';
import type { CheckReport } from './check-report.js';
import { checkTokenRoute, checkWebhook, formatCheckReport } from './checks.js';
import { CliError, controlClient, DEFAULT_SANDBOX_URL } from './cli-client.js';
import { clockTime, describeEvent, describeFlags } from './describe.js';
import { HEADER_NAME, isHttpUrl, readAnswer, trimAnswer } from './http.js';
import { startSandbox } from './sandbox.js';
import type { PushResult, SandboxEvent } from './types.js';

const usage = `channel-sandbox: a local emulation of the Channel Integration Service, and commands to drive it

  channel-sandbox [start] [options]         run a sandbox (default port 8787) and print what happens
  channel-sandbox expire                    every token issued so far now gets 401
  channel-sandbox fail-next [n]             the next n data calls (default 1) answer 401 (--status 503 --retry-after 2)
  channel-sandbox push [--order SO…] [--tamper] [--to URL]
                                            push a signed logistics.updated webhook and print the receiver's answer
  channel-sandbox listen --forward-to URL   receive the pushes here and forward them to URL (like \`stripe listen\`)
  channel-sandbox events [--all]            print what the sandbox does as it happens
  channel-sandbox stats                     counters: token calls, 401s, pushes…
  channel-sandbox token <user>              print a token for <user> (for curl)
  channel-sandbox ttl <seconds>             lifetime of the tokens issued from now on
  channel-sandbox check token-route <url> --header "cookie: session=…"
                                            check your app's token route against the tokenProvider contract
  channel-sandbox check webhook <url> --secret <s>
                                            check your app's webhook receiver against the push contract

Every command but start talks to a running sandbox:
  --sandbox <url>   its address (default $CHANNEL_SANDBOX_URL, else ${DEFAULT_SANDBOX_URL})
  --json            one JSON object (or one per line for start, events, listen) instead of text
  -h, --help        help for a command: channel-sandbox push --help`;

const commandHelp: Record<string, string> = {
  start: `channel-sandbox start [options]: run a sandbox and print each token, data call and push as it happens

  --port <n>             port to listen on (default 8787; 0 = any free port)
  --host <addr>          address to bind (default 127.0.0.1)
  --ttl <seconds>        lifetime of issued JWTs (default 900, as the service)
  --webhook-url <url>    where pushes go when no --to and no listener
  --webhook-secret <s>   signs pushes (default: unsigned)
  --access-key <ak>      fixed credentials instead of random ones
  --secret-key <sk>
  --control <who>        who may use the control API: loopback (default), any, off
  --control-host <name>  a DNS name the control API answers (repeatable); IP addresses, localhost
                         and single-label names (sandbox) always work: other names are refused
                         as a guard against DNS rebinding
  --quiet                print the address and credentials only
  --json                 one JSON line when ready, then one per event`,
  expire: 'channel-sandbox expire [--sandbox URL] [--json]: every token issued so far now gets 401 (tokens issued later are fine)',
  'fail-next': `channel-sandbox fail-next [n] [--status 401|408|429|500|502|503|504] [--retry-after <s>] [--sandbox URL] [--json]
  the next n data calls (default 1) answer with that status (default 401) whatever their token`,
  push: `channel-sandbox push [--order SO20240601001] [--tamper] [--to URL] [--sandbox URL] [--json]
  POSTs a logistics.updated push for the order (signed when the sandbox has a webhook secret) to --to,
  else through a connected \`channel-sandbox listen\`, else to the sandbox's --webhook-url; prints the answer.
  Exit 0 when delivered (2xx), 1 when not, with the receiver's status and the start of its answer.
  --tamper alters the body after signing: your receiver must refuse it (exit 0 when it does, 1 when it accepts).`,
  listen: `channel-sandbox listen --forward-to URL [--sandbox URL] [--json]
  Pushes without --to now come here and are POSTed to URL with the exact body and signature header;
  prints each push and the receiver's answer, which the sandbox records as the push's outcome.`,
  events: 'channel-sandbox events [--all] [--sandbox URL] [--json]: print every token, data call and push as it happens (--all: the recent past first)',
  stats: 'channel-sandbox stats [--sandbox URL] [--json]: counters since the sandbox started',
  token: 'channel-sandbox token <user> [--sandbox URL] [--json]: a token for <user>, as the token endpoint would issue it\n  curl -H "Authorization: Bearer $(channel-sandbox token qa-1)" http://127.0.0.1:8787/open/api/v1/sdk/orders',
  ttl: 'channel-sandbox ttl <seconds> [--sandbox URL] [--json]: lifetime of the tokens issued from now on (60 shows refresh-ahead within a minute)',
  check: `channel-sandbox check token-route <url> [--header "name: value"]... [--sandbox URL] [--json]
  Calls your running app's token route as your front end would (with the --header credentials of a
  signed-in user) and checks: { access_token } holding a JWT this sandbox issued (point your app's
  token exchange at it); ?force=1 and POST {"forceRefresh":true} give a new token; Cache-Control:
  no-store; no token without the credentials; no CORS for other origins; the time per call.

channel-sandbox check webhook <url> [--secret <s>] [--json]
  Pushes to your running receiver (secret: --secret, else $CHANNEL_WEBHOOK_SECRET) and checks: a
  signed push gets 2xx within 8 s; upper-case hex accepted; tampered, unsigned and bad signatures
  refused; the signature checked over the raw bytes; the same push twice has its effect once (a
  warning when that cannot be seen from outside); a 1 MiB push accepted. The pushes are for order
  SO20240601001 with a tracking event "channel-sandbox check …": use a test database.

One line per check: ✓ passed, ✗ failed (with what to fix), ⚠ worth a look, – skipped.
Exit 0 when nothing failed, 1 when something did, 2 for bad arguments.`,
};

type Options = NonNullable<ParseArgsConfig['options']>;
const common: Options = { sandbox: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } };
const optionsOf: Record<string, Options> = {
  start: {
    port: { type: 'string', default: '8787' },
    host: { type: 'string', default: '127.0.0.1' },
    ttl: { type: 'string', default: '900' },
    'webhook-url': { type: 'string' },
    'webhook-secret': { type: 'string', default: '' },
    'access-key': { type: 'string' },
    'secret-key': { type: 'string' },
    control: { type: 'string', default: 'loopback' },
    'control-host': { type: 'string', multiple: true },
    quiet: { type: 'boolean' },
  },
  expire: {},
  'fail-next': { status: { type: 'string' }, 'retry-after': { type: 'string' } },
  push: { order: { type: 'string' }, tamper: { type: 'boolean' }, to: { type: 'string' } },
  listen: { 'forward-to': { type: 'string' } },
  events: { all: { type: 'boolean' } },
  stats: {},
  token: {},
  ttl: {},
  check: { header: { type: 'string', multiple: true }, secret: { type: 'string' } },
};

/** How many positional arguments each command takes after its name. */
const positionals: Record<string, number> = { 'fail-next': 1, token: 1, ttl: 1, check: 2 };

type Values = Record<string, string | boolean | string[] | undefined>;

/**
 * Runs the CLI; resolves to the exit code (1: a push that was not delivered, a check that
 * failed), or throws {@link CliError} with a one-line message.
 */
export async function main(argv: string[]): Promise<number> {
  const named = argv[0] !== undefined && !argv[0].startsWith('-');
  const command = named ? argv[0] : 'start';
  if (!optionsOf[command]) throw new CliError(`unknown command "${command}"; the commands are ${Object.keys(optionsOf).join(', ')} (channel-sandbox --help)`, 2);
  let values: Values;
  let args: string[];
  try {
    ({ values, positionals: args } = parseArgs({ args: named ? argv.slice(1) : argv, options: { ...common, ...optionsOf[command] }, allowPositionals: true }) as { values: Values; positionals: string[] });
  } catch (error) {
    const option = /'(-[^']*)'/.exec((error as Error).message)?.[1];
    throw new CliError(option ? `${command}: unknown or incomplete option ${option} (channel-sandbox ${command} --help)` : `${command}: ${(error as Error).message}`, 2);
  }
  if (values.help) return console.log(!named && command === 'start' ? usage + '\n\n' + commandHelp.start : commandHelp[command]), 0;
  if (args.length > (positionals[command] ?? 0)) throw new CliError(`${command}: unexpected argument "${args[positionals[command] ?? 0]}" (channel-sandbox ${command} --help)`, 2);
  if (command === 'start') return start(values).then(() => 0);
  if (command === 'check') return check(args, values);
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
      return print(answer, `the next ${answer.count} data call${answer.count === 1 ? '' : 's'} answer ${answer.status}`);
    }
    case 'push': {
      if (values.to !== undefined) httpUrl(values.to as string, 'push: --to');
      const answer = (await client.call('POST', 'push', { order: values.order, tamper: values.tamper, to: values.to })) as unknown as PushResult;
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

/** `channel-sandbox check token-route|webhook <url>`: one line per check; exit 1 on any ✗. */
async function check(args: string[], values: Values): Promise<number> {
  const [target, url] = args;
  const targets = ['token-route', 'webhook'];
  if (!targets.includes(target)) throw new CliError(`check: what? channel-sandbox check token-route <url> or channel-sandbox check webhook <url>${target ? ` (not "${target}")` : ''}`, 2);
  if (url === undefined) throw new CliError(`check ${target}: which URL? e.g. channel-sandbox check ${target} http://127.0.0.1:3000/${target === 'webhook' ? 'webhooks/channel' : 'channel-token'}`, 2);
  httpUrl(url, `check ${target}: the URL`);
  let report: CheckReport;
  if (target === 'token-route') {
    if (values.secret !== undefined) throw new CliError('check token-route: --secret is for check webhook', 2);
    const headers: Record<string, string> = {};
    for (const line of (values.header as string[] | undefined) ?? []) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      if (colon < 1 || !HEADER_NAME.test(name)) throw new CliError(`check token-route: --header must be "name: value", e.g. --header "cookie: session=abc"; got "${line}"`, 2);
      // Two --header of one name are joined as HTTP joins them (cookies with "; ").
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : headers[name] + (name === 'cookie' ? '; ' : ', ') + value;
    }
    report = await asCliError(checkTokenRoute({ url, sandbox: sandboxUrl(values.sandbox as string | undefined), headers }));
  } else {
    if (values.header !== undefined) throw new CliError('check webhook: --header is for check token-route (the service sends only its own headers)', 2);
    if (values.sandbox !== undefined) throw new CliError('check webhook: --sandbox is not used (the check sends the pushes itself, signed with --secret)', 2);
    const secret = (values.secret as string | undefined) || process.env.CHANNEL_WEBHOOK_SECRET;
    if (!secret) throw new CliError('check webhook: which secret does your receiver verify with? pass --secret whsec_… (the --webhook-secret of channel-sandbox start) or set CHANNEL_WEBHOOK_SECRET', 2);
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

async function start(values: Values): Promise<void> {
  const port = wholeNumber(values.port as string, '--port', 0, 65535);
  const ttl = Number(values.ttl);
  if (!(ttl > 0) || !Number.isFinite(ttl)) throw new CliError('--ttl must be a positive number of seconds', 2);
  if ((values['access-key'] === undefined) !== (values['secret-key'] === undefined)) throw new CliError('pass both --access-key and --secret-key, or neither', 2);
  if (!['loopback', 'any', 'off'].includes(values.control as string)) throw new CliError('--control must be loopback, any or off', 2);
  const controlHosts = ((values['control-host'] as string[] | undefined) ?? []).map((name) => name.trim());
  for (const name of controlHosts) if (!/^[a-z0-9.-]+$/i.test(name)) throw new CliError(`--control-host must be a host name such as sandbox.ci.internal (no scheme, no port); got "${name}"`, 2);
  if (values['webhook-url'] !== undefined) httpUrl(values['webhook-url'] as string, '--webhook-url');
  const sandbox = await startSandbox({
    port,
    host: values.host as string,
    tokenTtlSeconds: ttl,
    webhookUrl: values['webhook-url'] as string | undefined,
    webhookSecret: values['webhook-secret'] as string,
    controlApi: values.control as 'loopback' | 'any' | 'off',
    controlHosts,
    credentials: values['access-key'] ? { accessKey: values['access-key'] as string, secretKey: values['secret-key'] as string } : undefined,
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE') throw new CliError(`port ${port} is in use (a sandbox already running? try \`channel-sandbox stats\`); pick another with --port, or --port 0 for any free one`);
    throw new CliError(`cannot listen on ${values.host}:${port}: ${error.message}`);
  });
  const webhook = values['webhook-url'] ?? 'none: a push needs --to URL or a running `channel-sandbox listen`';
  if (values.json) {
    const { accessKey, secretKey } = sandbox.credentials;
    console.log(JSON.stringify({ event: 'ready', url: sandbox.url, accessKey, secretKey, tokenTtlSeconds: ttl, webhookUrl: values['webhook-url'] ?? null, signed: !!values['webhook-secret'] }));
  } else {
    console.log(`channel-sandbox listening on ${sandbox.url}
  accessKey:  ${sandbox.credentials.accessKey}
  secretKey:  ${sandbox.credentials.secretKey}
  token TTL:  ${ttl} s
  webhook:    ${webhook}
  pushes are ${values['webhook-secret'] ? 'signed with the webhook secret' : 'unsigned (no --webhook-secret)'}
  control:    ${values.control === 'off' ? 'off' : `channel-sandbox expire | fail-next | push | listen | events --sandbox ${sandbox.url}`}
Ctrl+C to stop.`);
  }
  if (!values.quiet) sandbox.subscribe((event) => console.log(values.json ? JSON.stringify(event) : `${clockTime(event.at)}  ${describeEvent(event)}`));
  const stop = () => sandbox.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** `channel-sandbox listen`: takes pushes over an event stream, POSTs each to the local URL, reports the answer. */
async function listen(values: Values): Promise<void> {
  const forwardTo = values['forward-to'] as string | undefined;
  if (!forwardTo) throw new CliError('listen: where to? channel-sandbox listen --forward-to http://127.0.0.1:3000/webhooks/channel', 2);
  httpUrl(forwardTo, 'listen: --forward-to');
  const base = sandboxUrl(values.sandbox as string | undefined);
  const client = controlClient(base);
  let listenerId = '';
  for await (const { event, data } of client.stream('listen', { forward_to: forwardTo })) {
    if (event === 'ready') {
      listenerId = data.listenerId as string;
      console.log(values.json ? JSON.stringify({ event: 'ready', forwardTo, sandbox: base }) : `Ready: pushes from ${base} go to ${forwardTo} (${data.signed ? 'signed' : 'unsigned'}; the receiver has ${data.timeoutMs} ms). Ctrl+C to stop.`);
    } else if (event === 'push') {
      void forward(data as unknown as Delivery).then(async (outcome) => {
        const reported = await client.call('POST', `listen/${listenerId}/result`, { id: data.id, ...outcome }).then(
          () => '',
          (error: Error) => ` (not recorded: ${error.message})`,
        );
        const line = { id: data.id as number, orderNo: data.orderNo as string, ...outcome };
        const answered = outcome.status !== undefined && (outcome.status < 200 || outcome.status > 299) && outcome.answer ? `, answer: ${outcome.answer}` : '';
        console.log(values.json ? JSON.stringify(line) : `${clockTime(Date.now())}  push #${line.id} ${line.orderNo}${describeFlags(data as unknown as Delivery)} → ${forwardTo}: ${outcome.status !== undefined ? `HTTP ${outcome.status}` : `FAILED: ${outcome.error}`} in ${outcome.durationMs} ms${answered}${reported}`);
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
    return { error: 'connection failed: ' + (cause?.code === 'ECONNREFUSED' ? 'connection refused' : (cause?.message ?? (error as Error).message)), durationMs: took() };
  }
}

function describePush(p: PushResult, tampered: boolean): string {
  const outcome = p.ok ? `delivered, HTTP ${p.status}` : `FAILED: ${p.error}`;
  const line = `push #${p.id} ${p.orderNo}${tampered ? ' (tampered after signing)' : ''} → ${p.url}${p.via === 'listener' ? ' (through channel-sandbox listen)' : ''}: ${outcome} in ${p.durationMs} ms`;
  const lines = [line];
  if (!p.ok && p.answer) lines.push(`  answer: ${p.answer}`);
  if (tampered && p.ok) lines.push('  your receiver accepted a body altered after signing: verify X-Channel-Webhook-Signature over the raw body (createWebhookHandler does)');
  else if (tampered && p.status !== undefined) lines.push('  refused, as it should be: the body was altered after signing');
  return lines.join('\n');
}

function sandboxUrl(given: string | undefined): string {
  const url = given || process.env.CHANNEL_SANDBOX_URL || DEFAULT_SANDBOX_URL;
  httpUrl(url, given ? '--sandbox' : process.env.CHANNEL_SANDBOX_URL ? 'CHANNEL_SANDBOX_URL' : 'the default sandbox URL');
  return url.replace(/\/+$/, '');
}

function httpUrl(value: string, name: string): void {
  if (!isHttpUrl(value)) throw new CliError(`${name} must be an http(s) URL like http://127.0.0.1:3000/webhooks/channel; got "${value}"`, 2);
}

function wholeNumber(text: string, name: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw new CliError(`${name} must be a whole number from ${min} to ${max}; got "${text}"`, 2);
  return value;
}
