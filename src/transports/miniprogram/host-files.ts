import type { FileSpec, Progress, TransportRequest, TransportResponse } from '../../core/types.js';
import type { HostDownloadOptions, HostProgress, HostResult, HostUploadOptions } from './host-api.js';
import { toResponse } from './host-response.js';

// Mini-program code, as host-transport.ts: ES2015 built-ins only, no fetch, TextDecoder or URL.

/** What the SDK hands to a host's uploadFile() or downloadFile() for one attempt. */
export function fileOptions(
  req: TransportRequest,
  alipay: boolean | undefined,
  success: (r: HostResult) => void,
  fail: (r: HostResult) => void,
): HostUploadOptions | HostDownloadOptions {
  const file = req.file as FileSpec;
  // No cap at 60 s here: a large file may take longer, and the hosts document none for files.
  const options = Object.assign(
    { url: req.url, header: req.headers, headers: req.headers, timeout: req.timeout, success, fail },
    file.kind === 'upload' ? { filePath: file.filePath as string, name: file.name, formData: file.formData } : file.filePath && { filePath: file.filePath },
    req.hostOptions,
  ) as HostUploadOptions;
  if (alipay && file.kind === 'upload') {
    // Alipay: `fileName` is the field name on older clients, and `fileType` is required.
    options.fileName = file.name;
    if (options.fileType === undefined) options.fileType = fileTypeOf(options.filePath);
  }
  return options;
}

/** Alipay's fileType from the file's extension: audio and video by name, image otherwise. */
function fileTypeOf(path: string): string {
  const ext = (/\.([a-z0-9]+)$/i.exec(path) || ['', ''])[1].toLowerCase();
  return /^(mp4|mov|m4v|3gp|avi|webm|mkv|flv)$/.test(ext) ? 'video' : /^(mp3|m4a|aac|wav|amr|ogg|flac|silk)$/.test(ext) ? 'audio' : 'image';
}

/** A task's update in ky's shape; the core keeps percent within 0..1 and never going back. */
export function progressOf(update: HostProgress): Progress {
  const transferredBytes = update.totalBytesSent || update.totalBytesWritten || 0;
  const totalBytes = update.totalBytesExpectedToSend || update.totalBytesExpectedToWrite || 0;
  return { percent: totalBytes ? transferredBytes / totalBytes : (update.progress || 0) / 100, transferredBytes, totalBytes };
}

/**
 * A download's answer: its status, and for a 2xx the file. The body of an error is never read
 * as the file: the hosts write it where the file would go (the caller's filePath, or a temp
 * file), so it is removed there, and the path is never reported.
 */
export function toDownload(result: HostResult, removeFile: ((path: string) => void) | undefined): TransportResponse {
  const response = toResponse(Object.assign({}, result, { data: undefined }), false);
  const { filePath } = result;
  const tempFilePath = result.tempFilePath || result.apFilePath || filePath;
  if (response.status >= 200 && response.status < 300) {
    if (typeof tempFilePath !== 'string') throw new Error('no tempFilePath or filePath in its answer');
    response.value = typeof filePath === 'string' ? { tempFilePath, filePath, statusCode: response.status } : { tempFilePath, statusCode: response.status };
  } else if (typeof tempFilePath === 'string' && removeFile) removeFile(tempFilePath);
  return response;
}
