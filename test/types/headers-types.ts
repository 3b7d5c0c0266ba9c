// Type tests, compiled by `npm run typecheck:examples` (TS 7 and TS 5.9) against the built package:
// the client's, a request's and a file call's `headers` take an object, a `Headers` or a `Map` (the
// runtime reads all three by their entries), on both entries; values stay strings.
import { createClient, type HeadersInput } from 'channel-sdk';
import { createClient as createHostClient } from 'channel-sdk/miniprogram';

const tokenProvider = async () => 'a.b.c';
const client = createClient({ baseUrl: 'https://channel.example.com', tokenProvider, headers: new Headers({ 'x-app': 'web' }) });
createHostClient({ baseUrl: 'https://channel.example.com', tokenProvider, headers: new Map([['x-app', 'mini']]) });
void client.get('/orders', { headers: new Map([['x-trace', '1']]) });
void client.get('/orders', { headers: { 'x-trace': '1' } });
void client.download('/files/a.pdf', { headers: new Headers([['x-trace', '1']]) });
const fromRecord: HeadersInput = { accept: 'application/json' };
void fromRecord;
// @ts-expect-error -- header values are strings
void client.get('/orders', { headers: new Map([['x-count', 1]]) });
// @ts-expect-error -- header values are strings
void client.get('/orders', { headers: { 'x-count': 1 } });
