import { DEFAULT_SANDBOX_URL } from './cli-client.js';

/** `channel-sandbox --help`. */
export const usage = `channel-sandbox: a local emulation of the Channel Integration Service, and commands to drive it

  channel-sandbox [start] [options]         run a sandbox (default port 8787) and print what happens
  channel-sandbox expire                    every token issued so far now gets 401
  channel-sandbox fail-next [n]             the next n data calls (default 1) answer 401 (--status 503 --retry-after 2)
  channel-sandbox push [--order SO…] [--fresh] [--tamper] [--to URL]
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
  channel-sandbox inbox stats|dead|replay|discard|pause|resume --redis <url>
                                            your webhook inbox (createRedisInbox): counts, dead letters, replay, pause
  channel-sandbox doctor --service <url> --access-key <ak> --secret-key <sk> --token-route <url>
    --header "cookie: …" --webhook-url <url> --webhook-secret <s> --redis <url> [--prefix <p>]
                                            your whole integration: keys and clock, token route, webhook receiver, Redis

Every command but start, doctor and inbox talks to a running sandbox:
  --sandbox <url>   its address (default $CHANNEL_SANDBOX_URL, else ${DEFAULT_SANDBOX_URL})
  --json            one JSON object (or one per line for start, events, listen) instead of text
  -h, --help        help for a command: channel-sandbox push --help`;

/** `channel-sandbox <command> --help`, by command. */
export const commandHelp: Record<string, string> = {
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
  --clock-offset <s>     the sandbox's clock runs s seconds ahead of this machine's (--clock-offset=-600:
                         behind): its Date header, signature window and token times, as a service
                         whose clock differs would (channel-sandbox doctor reports the distance)
  --quiet                print the address and credentials only
  --json                 one JSON line when ready, then one per event`,
  expire: 'channel-sandbox expire [--sandbox URL] [--json]: every token issued so far now gets 401 (tokens issued later are fine)',
  'fail-next': `channel-sandbox fail-next [n] [--status 401|408|429|500|502|503|504] [--retry-after <s>] [--sandbox URL] [--json]
  the next n data calls (default 1) answer with that status (default 401) whatever their token`,
  push: `channel-sandbox push [--order SO20240601001] [--fresh] [--tamper] [--to URL] [--sandbox URL] [--json]
  POSTs a logistics.updated push for the order (signed when the sandbox has a webhook secret) to --to,
  else through a connected \`channel-sandbox listen\`, else to the sandbox's --webhook-url; prints the answer.
  Exit 0 when delivered (2xx), 1 when not, with the receiver's status and the start of its answer.
  The same order pushed again is the same bytes: "duplicate" when the receiver says it had them.
  --fresh pushes a new snapshot of the order instead (one more tracking event, now): new bytes.
  --tamper alters the body after signing: your receiver must refuse it (exit 0 when it does, 1 when it accepts).`,
  listen: `channel-sandbox listen --forward-to URL [--sandbox URL] [--json]
  Pushes without --to now come here and are POSTed to URL with the exact body and signature header;
  prints each push and the receiver's answer, which the sandbox records as the push's outcome.`,
  events: 'channel-sandbox events [--all] [--sandbox URL] [--json]: print every token, data call and push as it happens (--all: the recent past first)',
  stats: 'channel-sandbox stats [--sandbox URL] [--json]: counters since the sandbox started',
  token:
    'channel-sandbox token <user> [--sandbox URL] [--json]: a token for <user>, as the token endpoint would issue it\n  curl -H "Authorization: Bearer $(channel-sandbox token qa-1)" http://127.0.0.1:8787/open/api/v1/sdk/orders',
  ttl: 'channel-sandbox ttl <seconds> [--sandbox URL] [--json]: lifetime of the tokens issued from now on (60 shows refresh-ahead within a minute)',
  check: `channel-sandbox check token-route <url> [--header "name: value"]... [--sandbox URL] [--json]
  Calls your running app's token route as your front end would (with the --header credentials of a
  signed-in user) and checks: { access_token } holding a JWT this sandbox issued (point your app's
  token exchange at it); plain calls share a cached token; ?force=1 and POST {"forceRefresh":true}
  give a new token; a forced call never answers the token it names as rejected (what the client
  asks after a 401); Cache-Control: no-store; no token without the credentials; no CORS for other
  origins; no token for a forced call from another site; the time per call.

channel-sandbox check webhook <url> [--secret <s>] [--json]
  Pushes to your running receiver (secret: --secret, else $CHANNEL_WEBHOOK_SECRET) and checks: a
  signed push gets 2xx within 8 s; upper-case hex accepted; tampered, unsigned and bad signatures
  refused; the signature checked over the raw bytes; the same push twice has its effect once (a
  warning when that cannot be seen from outside); a 1 MiB push accepted. The pushes are for order
  SO20240601001 with a tracking event "channel-sandbox check …": use a test database.

One line per check: ✓ passed, ✗ failed (with what to fix), ⚠ worth a look, – skipped.
Exit 0 when nothing failed, 1 when something did, 2 for bad arguments.`,
  inbox: `channel-sandbox inbox stats|dead|replay|discard|pause|resume [id] --redis <url> [--prefix <p>] [--key-prefix <k>] [--cluster] [--json]
  Your webhook inbox (createRedisInbox), on your Redis, through the ioredis or redis package of the
  project you run this in (run it in your app's folder).
  stats                  pending, processing, retrying, dead letters, the oldest push's age, workers
                         seen in the last minute, paused, Redis's memory and maxmemory-policy
  dead [--limit n]       the dead letters (id, order, attempts, last error), oldest first (default 100)
  replay <id>            a dead letter back into the inbox, attempts from 0 (the id a dead-letter report names)
  replay --since <t>     those put aside since t: 2024-06-01T12:00:00Z, epoch ms, or an age (30m, 2h, 1d)
  replay --all           every dead letter
  discard <id>           drop a dead letter for good
  pause | resume         every worker stops taking pushes (they are still stored), or takes them again
  --redis <url>          redis://host:6379 (default $REDIS_URL); with --cluster, the nodes, comma-separated
  --prefix <p>           the prefix given to createRedisInbox (default channel-sdk:)
  --key-prefix <k>       your ioredis client's keyPrefix, if it has one (the inbox's keys start with it)
Exit 1 when replay or discard found no such dead letter, 2 for bad arguments.`,
  doctor: `channel-sandbox doctor [--service <url> [--access-key <ak> --secret-key <sk>] [--user <id>]]
    [--token-route <url> [--header "name: value"]...] [--webhook-url <url> --webhook-secret <s>]
    [--redis <url> [--prefix <p> [--key-prefix <k>]] [--cluster]] [--json]
  Checks each part it is given, against the sandbox or the real service:
  service        a token exchange for a probe user (--user, default channel-sandbox-doctor) signs with the
                 keys (else which of access key, secret key or signature time is wrong, as far as the
                 answer tells); this machine's clock against the service's Date header
  token route    what check token-route checks (tokens verified by the sandbox at --service)
  webhook        what check webhook checks
  Redis          reachable; maxmemory-policy (anything but noeviction fails); memory; persistence (none
                 or snapshots only: a warning naming appendonly yes); with --prefix the inbox's dead
                 letters, oldest waiting push and workers seen (--key-prefix: your ioredis client's
                 keyPrefix, if it has one), and whether another keyPrefix holds an inbox with that
                 prefix (a receiver and workers that differ in keyPrefix). Through your project's ioredis or redis: run it in your
                 app's folder. A Cluster: one node's URL is enough (each master holding slots is
                 found and checked), or --cluster with the nodes
  The values also come from CHANNEL_BASE_URL, CHANNEL_ACCESS_KEY, CHANNEL_SECRET_KEY,
  CHANNEL_WEBHOOK_SECRET and REDIS_URL (an option given wins over its variable). Nothing secret is printed (keys, secrets, the --header
  values, tokens, a Redis password).
One line per check: ✓ passed, ✗ failed (with what to fix), ⚠ worth a look, – not checked.
Exit 0 when nothing failed (warnings do not fail), 1 when something did, 2 for bad arguments.`,
};
