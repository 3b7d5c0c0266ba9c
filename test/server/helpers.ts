import { vi } from 'vitest';
import type { Logistics } from '../../src/schemas/logistics.js';
import { demoLogistics } from '../../src/testing/sandbox/demo-data.js';

/** Collects console output as `level message` lines until restored (tests stay quiet). */
export function captureConsole() {
  const lines: string[] = [];
  const levels = ['log', 'info', 'warn', 'error'] as const;
  const original = levels.map((level) => console[level]);
  for (const level of levels) console[level] = (...args: unknown[]) => void lines.push(level + ' ' + args.map(String).join(' '));
  return {
    lines,
    restore() {
      levels.forEach((level, i) => (console[level] = original[i]));
    },
  };
}

/** A push's logistics: the sandbox's first demo order. */
export const sampleLogistics: Logistics = demoLogistics[0];

/** A logistics object whose push body is about `bytes` long: one shipment with many tracking events. */
export function largeLogistics(bytes: number): Logistics {
  const event = { time: '2024-06-01T12:00:00+08:00', status: 'in_transit', desc: '快件已到达【深圳转运中心】，正在发往下一站' };
  const size = Buffer.byteLength(JSON.stringify(event)) + 1;
  const count = Math.max(1, Math.round((bytes - 300) / size));
  return { ...sampleLogistics, shipments: [{ ...sampleLogistics.shipments[0], events: Array.from({ length: count }, () => event) }] };
}

/**
 * A fresh sandbox (the built package's) and the environment examples/backend/channel.ts reads
 * pointed at it; then the recipes' `webhook`. Undo with `vi.unstubAllEnvs()` and `sandbox.close()`.
 */
export async function recipeEnvironment(webhookSecret: string) {
  const { startSandbox } = await import('channel-sdk/testing'); // built: the recipes import the package
  const sandbox = await startSandbox({ webhookSecret });
  vi.stubEnv('CHANNEL_WEBHOOK_SECRET', webhookSecret);
  vi.stubEnv('CHANNEL_BASE_URL', sandbox.url);
  vi.stubEnv('CHANNEL_ACCESS_KEY', sandbox.credentials.accessKey);
  vi.stubEnv('CHANNEL_SECRET_KEY', sandbox.credentials.secretKey);
  const { webhook } = await import('../../examples/backend/channel.js');
  return { sandbox, webhook };
}
