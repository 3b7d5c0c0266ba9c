// The `channel-sandbox` bin: every failure is one line on stderr (exit 2 for bad arguments, else 1);
// a push that was not delivered and a check that failed print their outcome, then exit 1.
import { CliError } from './testing/cli/cli-client.js';
import { main } from './testing/cli/cli.js';
import { messageIn } from './shared/message.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write('channel-sandbox: ' + messageIn({}, error) + '\n');
    process.exit(error instanceof CliError ? error.exitCode : 1);
  },
);
