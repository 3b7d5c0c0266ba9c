import { afterEach, expect, test } from 'vitest';
import { createClient } from '../../src/index.js';
import { startFakeService, type FakeService } from '../helpers/fake-service.js';
import { captureTimerThrows } from '../helpers/uncaught.js';

let service: FakeService;
afterEach(() => service.close());

test('a listener that throws does not fail the request; the error is reported asynchronously', async () => {
  service = await startFakeService();
  const client = createClient({ baseUrl: service.url, tokenProvider: () => service.issue() });
  const uncaught = await captureTimerThrows(async (wait) => {
    client.on('request', () => {
      throw new Error('listener bug');
    });
    await expect(client.get('/x')).resolves.toMatchObject({ path: '/x' });
    await wait(5);
  });
  expect(uncaught).toHaveLength(1);
  expect((uncaught[0] as Error).message).toBe('listener bug');
});

test('events carry what happened, in order, for a 401 recovery', async () => {
  service = await startFakeService();
  const client = createClient({ baseUrl: service.url, tokenProvider: () => service.issue() });
  const log: string[] = [];
  client.on('*', (type, e) => log.push(`${String(type)}${'reason' in (e as object) ? ':' + (e as { reason: string }).reason : ''}`));
  await client.get('/a');
  service.expireAll();
  await client.get('/b');
  expect(log).toEqual([
    'token:initial',
    'request',
    'response',
    'request',
    'response',
    'unauthorized',
    'token:unauthorized',
    'retry:unauthorized',
    'request',
    'response',
  ]);
});
