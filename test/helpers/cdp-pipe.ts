/**
 * Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`), with no
 * automation library in between. For what playwright hides: it keeps every page it attaches to
 * focused and visible (focus emulation), so a tab never sees a real `visibilitychange`; over the
 * bare protocol, minimising a window (`Browser.setWindowBounds`) hides its page as a user's
 * switch of app does, and restoring it shows the page again, with the browser's own events.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { chromiumFlags, executablePath } from './chromium.js';

/** One tab of the browser, in a window of its own. */
export interface PipeTab {
  /** Evaluates `expression` in the page (a promise is awaited) and returns its value as JSON. */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /** Minimises the tab's window (the page becomes hidden), or restores it (visible again). */
  setHidden(hidden: boolean): Promise<void>;
}

export interface PipeBrowser {
  /** Opens `url` in a new window and waits for its load. */
  open(url: string): Promise<PipeTab>;
  close(): Promise<void>;
}

/** Launches headless Chromium with the flags test/helpers/chromium.ts uses, its protocol on fds 3 and 4. */
export async function launchPipeChromium(): Promise<PipeBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'channel-sdk-cdp-'));
  const child: ChildProcess = spawn(executablePath, ['--headless', '--remote-debugging-pipe', ...chromiumFlags, '--user-data-dir=' + profile, 'about:blank'], {
    stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
  });
  const toBrowser = child.stdio[3] as Writable;
  const fromBrowser = child.stdio[4] as Readable;
  let id = 0;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  const listeners = new Set<(message: { method?: string; params?: Record<string, unknown>; sessionId?: string }) => void>();
  let buffer = '';
  fromBrowser.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let end: number;
    while ((end = buffer.indexOf('\0')) >= 0) {
      const message = JSON.parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
      const waiting = message.id !== undefined && pending.get(message.id);
      if (waiting) {
        pending.delete(message.id);
        if (message.error) waiting.reject(new Error(message.error.message));
        else waiting.resolve(message.result);
      } else listeners.forEach((listener) => listener(message));
    }
  });
  const send = <T = Record<string, unknown>>(method: string, params: object = {}, sessionId?: string) =>
    new Promise<T>((resolve, reject) => {
      const n = ++id;
      pending.set(n, { resolve: resolve as (v: unknown) => void, reject });
      toBrowser.write(JSON.stringify({ id: n, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
    });

  return {
    async open(url) {
      const { targetId } = await send<{ targetId: string }>('Target.createTarget', { url: 'about:blank', newWindow: true });
      const { sessionId } = await send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
      await send('Page.enable', {}, sessionId);
      const loaded = new Promise<void>((resolve) => {
        const listener = (message: { method?: string; sessionId?: string }) => {
          if (message.method === 'Page.loadEventFired' && message.sessionId === sessionId) {
            listeners.delete(listener);
            resolve();
          }
        };
        listeners.add(listener);
      });
      await send('Page.navigate', { url }, sessionId);
      await loaded;
      const { windowId } = await send<{ windowId: number }>('Browser.getWindowForTarget', { targetId });
      return {
        async evaluate<T>(expression: string) {
          const { result, exceptionDetails } = await send<{ result: { value: T }; exceptionDetails?: { exception?: { description?: string } } }>(
            'Runtime.evaluate',
            { expression, awaitPromise: true, returnByValue: true },
            sessionId,
          );
          if (exceptionDetails) throw new Error('in the page: ' + (exceptionDetails.exception?.description ?? JSON.stringify(exceptionDetails)));
          return result.value;
        },
        async setHidden(hidden) {
          await send('Browser.setWindowBounds', { windowId, bounds: { windowState: hidden ? 'minimized' : 'normal' } });
        },
      };
    },
    async close() {
      await send('Browser.close').catch(() => {});
      await new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
