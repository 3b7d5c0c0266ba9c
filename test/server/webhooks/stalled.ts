// A client that stalls its body, on a raw socket: for the body-deadline and byte-budget tests.
import { connect, type Socket } from 'node:net';
import { signWebhookBody } from '../../../src/server-node.js';

export interface Stalled {
  /** The status code of the answer, once one came. */
  status?: number;
  /** Everything the server sent. */
  head: string;
  closed: boolean;
  socket: Socket;
}

/**
 * Sends a push's headers (a well-formed but wrong signature, so the body must be read before it
 * can be refused) declaring `declared` bytes, then `sent` bytes of body, then nothing. Resolves
 * once those bytes are written.
 */
export async function stall(port: number, declared: number, sent: number, path = '/hook'): Promise<Stalled> {
  const signature = await signWebhookBody('x', 'not the secret');
  const state: Stalled = { head: '', closed: false, socket: undefined as never };
  await new Promise<void>((resolve) => {
    state.socket = connect(port, '127.0.0.1', () => {
      state.socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Channel-Webhook-Signature: ${signature}\r\nContent-Length: ${declared}\r\n\r\n`,
      );
      state.socket.write(Buffer.alloc(sent, 'x'), () => resolve());
    });
  });
  state.socket.on('data', (chunk) => {
    state.head += chunk.toString('latin1');
    state.status ??= Number(state.head.slice(9, 12));
  });
  state.socket.on('error', () => {});
  state.socket.on('close', () => (state.closed = true));
  return state;
}
