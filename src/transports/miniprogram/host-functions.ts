// Which host's request(), uploadFile() and downloadFile() a mini-program client calls: the ones
// passed to createClient, else those of the host they belong to, else the first host that has one.
import { fail } from '../../shared/check.js';
import type { HostDownloadFile, HostRequest, HostUploadFile } from './host-api.js';
import { findHost, HOST_NAMES, hostGlobals } from './host-globals.js';

/** The createClient options that name host functions. */
export const HOST_METHODS = ['request', 'uploadFile', 'downloadFile'];

type Method = 'request' | 'uploadFile' | 'downloadFile';

/** The host functions a client uses, found once at createClient (files at their first use). */
export interface HostFunctions {
  /** The host the functions belong to (`wx`, `my`, `tt`, `swan`, `qq`, `uni`, `Taro`), if known. */
  name: string | undefined;
  /** That host's global object (where its onAppShow & co. are found), else the first host's with a request(). */
  host: Record<string, unknown> | undefined;
  request: HostRequest;
  uploadFile: () => HostUploadFile;
  downloadFile: () => HostDownloadFile;
  /** Alipay (or DingTalk) is the host under any wrapper (uni, Taro): its uploadFile options differ. */
  alipay: boolean;
  /** Removes a file the host wrote, with its own file system API; best effort, never throws. */
  removeFile: (filePath: string) => void;
}

/**
 * Checks the host functions given in `options` and finds the others. Throws a ConfigError for a
 * value that is not a function, or when no host has a request().
 */
export function resolveHostFunctions(options: { request?: unknown; uploadFile?: unknown; downloadFile?: unknown }): HostFunctions {
  const given: Record<string, HostRequest | undefined> = {};
  for (const method of HOST_METHODS as Method[]) {
    const fn = options[method];
    if (fn !== undefined && typeof fn !== 'function') fail(method + ' must be the host ' + method + ' function, e.g. ' + method + ': wx.' + method);
    given[method] = fn as HostRequest | undefined;
  }
  // The host the given functions belong to (Douyin's dataType and the lists of hostOptions
  // differ per host), else the first with a request().
  const first = findHost('request');
  const found = options.request
    ? hostGlobals().filter(([, host]) => HOST_METHODS.some((method) => given[method] !== undefined && host[method] === given[method]))[0]
    : first;
  const name = found && found[0];
  const own = () => hostGlobals().filter(([host]) => host === name)[0];
  /** The host's function: given, else that of the host found above, else the first host's that has one. */
  const fn = (method: Method) => () => {
    let f = given[method];
    if (!f) {
      const mine = own();
      const host = mine && typeof mine[1][method] === 'function' ? mine : findHost(method);
      if (!host)
        fail(
          'no mini-program ' +
            method +
            '() found: looked for ' +
            HOST_NAMES.join(', ') +
            '; pass ' +
            method +
            ' (e.g. ' +
            method +
            ': wx.' +
            method +
            ') to createClient',
        );
      f = given[method] = bound(host[1], method);
    }
    return f;
  };
  return {
    name,
    // The app's life is the runtime's: a request() of no host global (uni-app's `uni`, a Proxy
    // whose every read is a new function; Taro's module; a wrapper of yours) follows the host found.
    host: (found || first || [])[1],
    request: fn('request')(),
    uploadFile: fn('uploadFile') as () => HostUploadFile,
    downloadFile: fn('downloadFile') as () => HostDownloadFile,
    alipay: hostGlobals().some(([host]) => host === 'my'),
    removeFile: (filePath) => {
      try {
        (own()[1] as { getFileSystemManager(): { unlink(o: object): void } }).getFileSystemManager().unlink({ filePath, fail() {} });
      } catch {
        // no host, or no file system API: the host clears its temp files itself
      }
    },
  };
}

/** A host method called on its host: some hosts' functions need their object as `this`. */
function bound(host: Record<string, unknown>, method: string): HostRequest {
  return (opts) => (host[method] as (o: unknown) => unknown)(opts);
}
