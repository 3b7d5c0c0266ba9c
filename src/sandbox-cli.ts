// The `channel-sandbox` bin: every failure is one line on stderr (exit 2 for bad arguments, else 1),
// and with --json also one JSON object on stdout, so that a CI step parsing the report finds one;
// a push that was not delivered and a check that failed print their outcome, then exit 1.
import { CliError } from './testing/cli/cli-client.js';
import { main } from './testing/cli/cli.js';
import { messageIn } from './shared/message.js';

const argv = process.argv.slice(2);
main(argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const message = messageIn({}, error);
    const code = error instanceof CliError ? error.exitCode : 1;
    const exit = () => process.exit(code);
    process.stderr.write('channel-sandbox: ' + message + '\n');
    if (argv.some((a) => a === '--json' || a.startsWith('--json=')))
      process.stdout.write(JSON.stringify({ ok: false, exit: code, error: message }) + '\n', exit);
    else exit();
  },
);
