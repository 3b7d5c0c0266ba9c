import { ConfigError } from '../../errors/ConfigError.js';
import { isWxShaped, type MockHostKind } from './host-answers.js';
import type { MockFileSystem } from './types.js';

/** Where each host puts a downloaded file when the caller names no path (as a device shows it). */
const TEMP_PREFIX: Record<MockHostKind, string> = {
  wx: 'wxfile://tmp_',
  qq: 'qqfile://tmp_',
  tt: 'ttfile://temp/',
  swan: 'bdfile://tmp_',
  my: 'https://resource/apml',
  uni: 'wxfile://tmp_',
  Taro: 'wxfile://tmp_',
};

type Callbacks = { success?(r: object): void; fail?(r: object): void; complete?(r: object): void };

/** The mock's files in memory (path → bytes), and the host's FileSystemManager over them. */
export function createFiles(kind: MockHostKind, files: Map<string, Uint8Array>) {
  let temp = 0;
  const missing = (api: string, path: string) =>
    new ConfigError(
      `${api}:fail no such file or directory ${path} (createMockHost keeps files in memory: put one there with host.files.set(path, bytes) or getFileSystemManager().writeFileSync(path, data))`,
    );
  const bytesOf = (path: string, api: string): Uint8Array => {
    const found = files.get(path);
    if (!found) throw missing(api, path);
    return found;
  };
  /** Runs `body`; calls back on a microtask, `fail` with the host's shape when it threw. */
  const callBack = (api: string, options: Callbacks, body: () => void) => {
    let result: object;
    let ok = true;
    try {
      body();
      result = isWxShaped(kind) ? { errMsg: api + ':ok' } : { success: true };
    } catch (error) {
      ok = false;
      result = isWxShaped(kind) ? { errMsg: (error as Error).message.replace(/ \(createMockHost.*$/, '') } : { error: 10022, errorMessage: 'file not found' };
    }
    void Promise.resolve().then(() => {
      (ok ? options.success : options.fail)?.(result);
      options.complete?.(result);
    });
  };

  const fs: MockFileSystem = {
    readFileSync(filePath, encoding) {
      const bytes = bytesOf(filePath, 'readFileSync');
      if (encoding) return Buffer.from(bytes).toString(encoding === 'utf-8' ? 'utf8' : (encoding as BufferEncoding));
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    },
    writeFileSync(filePath, data, encoding) {
      const bytes = typeof data === 'string' ? Buffer.from(data, (encoding === 'utf-8' ? 'utf8' : encoding) as BufferEncoding) : new Uint8Array(data);
      files.set(filePath, new Uint8Array(bytes));
    },
    unlinkSync(filePath) {
      bytesOf(filePath, 'unlink');
      files.delete(filePath);
    },
    unlink: (options) => callBack('unlink', options, () => fs.unlinkSync(options.filePath)),
    accessSync: (path) => void bytesOf(path, 'access'),
    access: (options) => callBack('access', options, () => fs.accessSync(options.path)),
  };

  return {
    fs,
    /** The bytes at `path`, or a ConfigError saying how to put a file there. */
    read: (path: string, api: string) => bytesOf(path, api),
    /** Writes a download's body where the host would: `filePath` if given, else a new temp file. */
    write(bytes: Uint8Array, filePath: string | undefined, extension: string): string {
      const path = filePath ?? TEMP_PREFIX[kind] + String(++temp).padStart(6, '0') + extension;
      files.set(path, bytes);
      return path;
    },
  };
}
