import type { SandboxEvent } from './types.js';

/** One line of text for a sandbox event, as `channel-sandbox start`, `events` and `listen` print it. */
export function describeEvent(event: SandboxEvent): string {
  switch (event.type) {
    case 'token':
      return event.ok
        ? `token #${event.jti} issued for ${event.externalUserId}${event.via === 'direct' ? ' (control API)' : ''}`
        : `token request refused: ${event.status} ${event.reason} (code ${event.code})`;
    case 'data': {
      const call = `${event.method} ${event.path}${event.query ? '?' + event.query : ''} → ${event.status}`;
      if (event.reason) return `${call} (${event.reason}${event.jti ? `, token #${event.jti}` : ''})`;
      return event.jti ? `${call} (token #${event.jti})` : call;
    }
    case 'control':
      if (event.action === 'expire') return `expired every token issued so far (${event.expired}): they now get 401`;
      if (event.action === 'fail-next') return describeFailNext(event.count, event.status);
      return `tokens issued from now on live ${event.seconds} s`;
    case 'push:sent':
      return `push #${event.id} ${event.orderNo}${describeFlags(event)} → ${event.url}${event.via === 'listener' ? ' (through channel-sandbox listen)' : ''}`;
    case 'push':
      return `push #${event.record.id} ${describeOutcome(event.record)}`;
    case 'listener':
      return event.connected ? `listener connected: pushes go to ${event.forwardTo}` : `listener for ${event.forwardTo} disconnected`;
  }
}

/** `fail-next`'s sentence, for the CLI's answer and the event line: `the next data call answers 401`, `the next 2 data calls answer 503`. */
export function describeFailNext(count: number, status: number): string {
  if (count === 0) return 'no data call is set to fail: the next ones answer as usual';
  return count === 1 ? `the next data call answers ${status}` : `the next ${count} data calls answer ${status}`;
}

/** `(signed)`, `(unsigned, tampered)`… */
export function describeFlags(push: { signed: boolean; tampered: boolean }): string {
  return ` (${push.signed ? 'signed' : 'unsigned'}${push.tampered ? ', tampered after signing' : ''})`;
}

/** `delivered, HTTP 200 in 12 ms` or `FAILED: HTTP 500 in 3 ms, answer: {"error":"handler failed"}`. */
export function describeOutcome(push: { ok: boolean; status?: number; error?: string; answer?: string; durationMs: number }): string {
  return `${push.ok ? `delivered, HTTP ${push.status}` : `FAILED: ${push.error}`} in ${push.durationMs} ms${!push.ok && push.answer ? `, answer: ${push.answer}` : ''}`;
}

/** `12:03:04.567`, local time. */
export function clockTime(epochMs: number): string {
  const date = new Date(epochMs);
  return date.toTimeString().slice(0, 8) + '.' + String(date.getMilliseconds()).padStart(3, '0');
}
