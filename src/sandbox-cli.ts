// The `channel-sandbox` bin.
import { main } from './testing/cli.js';

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error('channel-sandbox: ' + (error instanceof Error ? error.message : String(error)));
  process.exit(1);
});
