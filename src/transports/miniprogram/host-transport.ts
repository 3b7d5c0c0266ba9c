import { NetworkError } from '../../errors/NetworkError.js';
import { TimeoutError } from '../../errors/TimeoutError.js';
import { abortError } from '../../core/requests/request-abort.js';
import type { SignalLike, Transport, TransportRequest, TransportResponse } from '../../core/types.js';
import { isChannelError } from '../../errors/ChannelError.js';
import { messageOf } from '../../shared/message.js';
import type { HostDownloadFile, HostRequest, HostRequestOptions, HostResult, HostTask, HostUploadFile } from './host-api.js';
import { statusOf, toError, toResponse } from './host-response.js';
import { fileOptions, progressOf, toDownload } from './host-files.js';
import { limiter } from './concurrency-queue.js';

// Written for the mini-program hosts: no fetch, Headers, AbortController, TextDecoder, URL,
// Object.entries or Promise.prototype.finally here (see README "Mini-program hosts").

export interface MiniProgramTransportOptions {
  request: HostRequest;
  /** Found at the first upload (a host without one fails only then, with a ConfigError). */
  uploadFile: () => HostUploadFile;
  /** Found at the first download. */
  downloadFile: () => HostDownloadFile;
  /** The uploads end at Alipay's (or DingTalk's) uploadFile, whose options differ. */
  alipay?: boolean;
  /** `dataType` that makes the host return raw text: `'string'` for tt/swan, `'text'` elsewhere. */
  dataType: string;
  /** The host's limit: requests in flight at once (one fewer: a slot is kept for the tokenProvider), uploads and downloads; more wait in a queue (WeChat allows 10 of each). */
  concurrency: number;
  /** Removes a file the host wrote (a download's error body); best effort, never throws. */
  removeFile?: (path: string) => void;
}

const HOST_TIMEOUT_LIMIT = 60000;

/** A client's transports over one host: its calls', and client.hostRequest's (the host's own result, its own dataType). */
export interface MiniProgramTransports {
  transport: Transport;
  native: Transport;
}

/**
 * The transports over a mini-program host's `request()`, `uploadFile()` and `downloadFile()`:
 * one for the client's calls, one for client.hostRequest, sharing the host's limits.
 */
export function createMiniProgramTransports(options: MiniProgramTransportOptions): MiniProgramTransports {
  const { request, dataType, concurrency, alipay } = options;
  // The host's limits are per API (WeChat: 10 requests, 10 uploads, 10 downloads at once). One
  // request slot is kept free: a tokenProvider's own request() never waits behind ours.
  const slots = { request: limiter(concurrency - 1 || 1), upload: limiter(concurrency), download: limiter(concurrency) };

  /** `native`: resolve to the host's own result, whatever the status, as its caller's request() would. */
  const attempt = (req: TransportRequest, native: boolean) =>
    new Promise<TransportResponse>((resolve, reject) => {
      const { signal, file } = req;
      const kind = file ? file.kind : 'request';
      const slot = slots[kind];
      let settled = false;
      let started = false;
      let queued = false; // waited for a slot
      let task: HostTask | undefined;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const context = { method: req.method, url: req.url };

      // Every request settles exactly once, whatever order success/fail/complete/abort come in.
      const finish = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) clearTimeout(timer);
        if (signal) signal.removeEventListener('abort', onAbort);
        if (started) slot.release();
        outcome();
      };
      const abortTask = () => {
        const t = task;
        if (t && typeof t.abort === 'function') {
          try {
            t.abort();
          } catch {
            // the host may throw on a finished task
          }
        }
      };
      // Settle first, then abort the task: hosts answer abort() with a synchronous fail('abort').
      const onAbort = () => {
        finish(() => reject(abortError(signal as SignalLike, context)));
        abortTask();
      };
      // What the host hands to a callback is read inside a try: a host that calls success()
      // with nothing, or with a broken header list, still settles the request.
      const settleWith = (read: () => TransportResponse | Error, answer: string) => {
        let outcome: TransportResponse | Error;
        try {
          outcome = read();
        } catch (error) {
          outcome = new NetworkError(
            'the host answered ' + answer + ' with something that is not a response (' + messageOf(error) + ')',
            Object.assign({ cause: error }, context),
          );
        }
        finish(() => (outcome instanceof Error ? reject(outcome) : resolve(outcome)));
      };
      const read = (result: HostResult) => (kind === 'download' ? toDownload(result, options.removeFile) : toResponse(result, !!req.raw, native));
      const success = (result: HostResult) => settleWith(() => read(result), 'success()');
      const fail = (error: HostResult) => settleWith(() => (statusOf(error) ? read(error) : toError(error || {}, req, kind)), 'fail()');

      function start(): void {
        if (settled) return;
        started = true;
        slot.take();
        // Queued until now: the token is taken as the attempt leaves (TransportRequest.rebind).
        const ready = queued && req.rebind ? req.rebind() : undefined;
        if (ready) ready.then(send, (error: unknown) => finish(() => reject(error)));
        else send();
      }

      function send(): void {
        if (settled) return;
        timer = setTimeout(() => {
          finish(() => reject(new TimeoutError('no response within ' + req.timeout + ' ms (timeout)', context)));
          abortTask();
        }, req.timeout);
        try {
          const call = kind === 'request' ? request : kind === 'upload' ? options.uploadFile() : options.downloadFile();
          task = call(kind === 'request' ? requestOptions(req, native ? undefined : dataType, success, fail) : fileOptions(req, alipay, success, fail)) as
            HostTask | undefined;
          // Taro returns a Promise with .abort; its rejection is reported through fail too.
          if (task && typeof task.then === 'function' && typeof task.catch === 'function') task.catch(() => {});
          // client.hostRequest's task hears this attempt's headers and chunks while it is under way.
          const attach = req.passOn && (req.passOn.attach as ((task: HostTask, live: () => boolean) => void) | undefined);
          if (attach && task) attach(task, () => !settled);
          const onProgress = req.onProgress;
          if (onProgress && task && typeof task.onProgressUpdate === 'function') {
            task.onProgressUpdate((update) => {
              // A download's progress is the file's only. The hosts tell the status at the end, and
              // report an error's body (a 401 before the replay) like a file: the service's error
              // bodies are far below 1 KiB, so nothing is reported before that much has arrived.
              if (!settled && update && !(kind === 'download' && !((update.totalBytesWritten as number) > 1024))) onProgress(progressOf(update));
            });
          }
        } catch (error) {
          finish(() =>
            reject(
              isChannelError(error)
                ? error
                : new NetworkError(
                    'the host ' + (kind === 'request' ? 'request' : kind + 'File') + '() threw: ' + messageOf(error),
                    Object.assign({ cause: error }, context),
                  ),
            ),
          );
        }
      }

      if (signal) {
        if (signal.aborted) return reject(abortError(signal, context));
        signal.addEventListener('abort', onAbort, { once: true });
      }
      slot.enter(start);
      queued = !started;
    });

  return { transport: (req) => attempt(req, false), native: (req) => attempt(req, true) };
}

function requestOptions(
  req: TransportRequest,
  dataType: string | undefined,
  success: (r: HostResult) => void,
  fail: (r: HostResult) => void,
): HostRequestOptions {
  const options: HostRequestOptions = {
    url: req.url,
    method: req.method,
    header: req.headers,
    headers: req.headers,
    timeout: Math.min(req.timeout, HOST_TIMEOUT_LIMIT),
    success,
    fail,
  };
  // The core reads text; client.hostRequest's caller reads what the host gives (its dataType, else json).
  if (dataType) Object.assign(options, { dataType, responseType: 'text' });
  if (req.body !== undefined) options.data = req.body;
  // The SDK's own keys are refused in hostOptions, so these only add or change dataType/responseType.
  return Object.assign(options, req.hostOptions);
}
