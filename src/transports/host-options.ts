import { checkKeys, describe, fail } from '../core/check.js';
import type { CallKind } from '../core/client.js';

/**
 * What each host's request / uploadFile / downloadFile accepts beyond what the SDK sets itself,
 * for `hostOptions`. Read from the hosts' typings and documentation:
 * - wx (and qq, which mirrors it): miniprogram-api-typings 5.2.3 `RequestOption`,
 *   `UploadFileOption`, `DownloadFileOption`; developers.weixin.qq.com/miniprogram/dev/api/network/
 * - my: @mini-types/my 3.0.14 `request`, `uploadFile` (`fileType` image/video/audio, required;
 *   `hideLoading`), `downloadFile`; opendocs.alipay.com/mini/api/owycmh, /kmq4hc, /xr054r
 * - tt: @douyin-microapp/typings 1.3.1 api/request.d.ts, upload-file.d.ts, download-file.d.ts
 * - swan: smartprogram.baidu.com/docs/develop/api/net/request (dataType json|string, responseType)
 * - uni: @dcloudio/types 3.4.32 `UniNamespace.RequestOptions`, `UploadFileOption` (`file` is the
 *   H5 File), `DownloadFileOption`
 * - Taro: @tarojs/taro 4.2.1 types/api/network/request.d.ts, upload.d.ts, download.d.ts
 * Keys the SDK owns (url, method, data, header(s), timeout, filePath, name, formData, the
 * callbacks, Taro's signal) are refused: they have options of their own.
 */
const wxRequest = 'dataType responseType enableHttp2 enableQuic enableCache enableHttpDNS httpDNSServiceId httpDNSTimeout enableHttpDNSFallback enableChunked enableProfile forceCellularNetwork redirect useHighPerformanceMode';
const wxFiles = 'enableHttp2 enableQuic enableProfile useHighPerformanceMode';
const lists: Record<string, Record<CallKind, string>> = {
  wx: { request: wxRequest, upload: wxFiles, download: wxFiles },
  qq: { request: wxRequest, upload: wxFiles, download: wxFiles },
  my: { request: 'dataType referrerStrategy enableCookie', upload: 'fileType hideLoading', download: '' },
  tt: { request: 'dataType responseType', upload: '', download: '' },
  swan: { request: 'dataType responseType', upload: '', download: '' },
  uni: {
    request: 'dataType responseType sslVerify withCredentials firstIpv4 enableHttp2 enableQuic enableCache enableHttpDNS httpDNSServiceId enableChunked forceCellularNetwork enableCookie cloudCache defer',
    upload: 'fileType file',
    download: '',
  },
  Taro: {
    request: 'dataType responseType useHighPerformanceMode enableHttp2 enableQuic enableCache enableHttpDNS httpDNSServiceId enableChunked forceCellularNetwork enableCookie referrerStrategy jsonp jsonpCache mode credentials cache retryTimes backup dataCheck useStore storeCheckKey storeSign storeCheck',
    upload: 'fileName withCredentials',
    download: 'withCredentials',
  },
};

const owned: Record<string, string> = {
  url: 'the path argument',
  method: 'the method option',
  data: 'json or body',
  header: 'headers',
  headers: 'headers',
  timeout: 'timeout',
  filePath: 'filePath',
  name: 'name',
  formData: 'formData',
  signal: 'signal',
  success: 'the returned promise',
  fail: 'the returned promise',
  complete: 'the returned promise',
};

// Values that change how the body arrives: checked, since the SDK reads it.
const values: Record<string, Record<string, string[]>> = {
  dataType: { tt: ['json', 'string'], swan: ['json', 'string'], my: ['json', 'text', 'base64', 'arraybuffer'] },
  responseType: { '*': ['text', 'arraybuffer'] },
  fileType: { my: ['image', 'video', 'audio'], uni: ['image', 'video', 'audio'] },
};

const words = (text: string) => (text ? text.split(' ') : []);

/** The keys `host` (a name from hosts.ts, or undefined when unknown) accepts for `kind`. */
function known(host: string | undefined, kind: CallKind): string[] {
  if (host && lists[host]) return words(lists[host][kind]);
  // A request function that is not one of the known hosts' (a wrapper): any host's key.
  const all: string[] = [];
  for (const name in lists) for (const key of words(lists[name][kind])) if (all.indexOf(key) < 0) all.push(key);
  return all;
}

/**
 * Checks `value` as hostOptions for a `kind` call on `host`: a plain object whose keys the host
 * accepts for that call (an unknown key is a ConfigError with "did you mean"). `kinds` lists the
 * calls the options may be meant for (the client's options serve all three).
 */
export function checkHostOptions(value: unknown, host: string | undefined, kinds: CallKind[], where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail(where + ' must be an object of the host\'s own options, e.g. { enableHttp2: true }; got ' + describe(value));
  }
  const o = value as Record<string, unknown>;
  const accepted: string[] = [];
  for (const kind of kinds) for (const key of known(host, kind)) if (accepted.indexOf(key) < 0) accepted.push(key);
  for (const key of Object.keys(o)) {
    if (owned[key]) fail(where + '.' + key + ' is set by channel-sdk; use ' + owned[key] + ' instead');
    const allowed = values[key] && (values[key][host || ''] || values[key]['*']);
    if (allowed && accepted.indexOf(key) >= 0 && allowed.indexOf(o[key] as string) < 0) {
      fail(where + '.' + key + ' must be one of ' + allowed.map((v) => '"' + v + '"').join(', ') + (host ? ' on ' + host : '') + '; got ' + describe(o[key]));
    }
  }
  if (!accepted.length && Object.keys(o).length) fail(where + ': ' + (host || 'the host') + "'s " + kinds.join('/') + ' takes no options beyond what channel-sdk sets; remove ' + Object.keys(o).join(', '));
  checkKeys(o, accepted, (host ? host + ' ' : '') + 'hostOptions key');
  return o;
}

/** The keys of `options` that a `kind` call on `host` takes. */
export function pick(options: Record<string, unknown> | undefined, host: string | undefined, kind: CallKind): Record<string, unknown> | undefined {
  if (!options) return undefined;
  const keys = known(host, kind);
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(options)) if (keys.indexOf(key) >= 0) (out || (out = {}))[key] = options[key];
  return out;
}
