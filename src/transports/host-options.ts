import { checkKeys, describe, fail } from '../core/check.js';
import type { CallKind } from '../core/client.js';

/**
 * What each host's request / uploadFile / downloadFile accepts beyond what the SDK sets itself,
 * for `hostOptions`: per host, the keys of request(), uploadFile() and downloadFile(), separated
 * by `|`. Read from the hosts' typings and documentation:
 * - wx (and qq, which mirrors it): miniprogram-api-typings 5.2.3 `RequestOption`,
 *   `UploadFileOption`, `DownloadFileOption`; developers.weixin.qq.com/miniprogram/dev/api/network/
 * - my: @mini-types/my 3.0.14 `request`, `uploadFile` (`fileType` image/video/audio, required;
 *   `hideLoading`), `downloadFile`; opendocs.alipay.com/mini/api/owycmh, /kmq4hc, /xr054r
 * - tt: @douyin-microapp/typings 1.3.1 api/request.d.ts, upload-file.d.ts, download-file.d.ts
 * - swan: smartprogram.baidu.com/docs/develop/api/net/request (dataType json|string, responseType)
 * - uni: @dcloudio/types 3.4.32 `UniNamespace.RequestOptions`, `UploadFileOption` (`file` is the
 *   H5 File), `DownloadFileOption`
 * - Taro: @tarojs/taro 4.2.1 types/api/network/request.d.ts, upload.d.ts, download.d.ts; and
 *   Alipay's fileType, which Taro's uploadFile hands to my.uploadFile as it is (taro-platform-alipay)
 * Kept as strings: they are only ever searched, and strings are the smallest form to ship.
 */
const wxRequest = 'dataType responseType enableHttp2 enableQuic enableCache enableHttpDNS httpDNSServiceId httpDNSTimeout enableHttpDNSFallback enableChunked enableProfile forceCellularNetwork redirect useHighPerformanceMode';
const wxFiles = 'enableHttp2 enableQuic enableProfile useHighPerformanceMode';
const wx = wxRequest + '|' + wxFiles + '|' + wxFiles;
const lists: Record<string, string> = {
  wx,
  qq: wx,
  my: 'dataType referrerStrategy enableCookie|fileType hideLoading|',
  tt: 'dataType responseType||',
  swan: 'dataType responseType||',
  uni: 'dataType responseType sslVerify withCredentials firstIpv4 enableHttp2 enableQuic enableCache enableHttpDNS httpDNSServiceId enableChunked forceCellularNetwork enableCookie cloudCache defer|fileType file|',
  Taro:
    'dataType responseType useHighPerformanceMode enableHttp2 enableQuic enableCache enableHttpDNS httpDNSServiceId enableChunked forceCellularNetwork enableCookie referrerStrategy jsonp jsonpCache mode credentials cache retryTimes backup dataCheck useStore storeCheckKey storeSign storeCheck|fileName withCredentials fileType|withCredentials',
};
const kinds: CallKind[] = ['request', 'upload', 'download'];

// Keys the SDK sets itself, refused with the option to use instead ('' names the option of that name).
const owned: Record<string, string> = { url: 'the path argument', method: 'the method option', data: 'json or body', header: 'headers', headers: '', timeout: '', filePath: '', name: '', formData: '', signal: '', success: 'the returned promise', fail: 'the returned promise', complete: 'the returned promise' };

// Values that change how the body arrives: checked, since the SDK reads it ('*': any host).
const values: Record<string, Record<string, string[]>> = {
  dataType: { tt: ['json', 'string'], swan: ['json', 'string'], my: ['json', 'text', 'base64', 'arraybuffer'] },
  responseType: { '*': ['text', 'arraybuffer'] },
  fileType: { my: ['image', 'video', 'audio'], uni: ['image', 'video', 'audio'], Taro: ['image', 'video', 'audio'] },
};

/** The keys `host` accepts for the `i`th kind of call; any known host's for a host we cannot name. */
function known(host: string | undefined, i: number): string[] {
  const all: string[] = [];
  for (const name in lists) {
    if (host && lists[host] && name !== host) continue;
    for (const key of lists[name].split('|')[i].split(' ')) if (key && all.indexOf(key) < 0) all.push(key);
  }
  return all;
}

/**
 * `hostOptions` for a client on `host` (a name from hosts.ts, or undefined when unknown): the
 * client's own `given` checked against every list of the host, and a function that checks a
 * call's own against the list of its API and adds the client's that API takes. An unknown key
 * is a ConfigError with "did you mean"; a key the SDK sets names the option to use instead.
 */
export function hostOptionsFor(host: string | undefined, given: unknown): (kind: CallKind, value: unknown) => Record<string, unknown> | undefined {
  const accepts = kinds.map((_, i) => known(host, i));
  const check = (value: unknown, accepted: string[], where: string, what: string): Record<string, unknown> => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(where + " must be an object of the host's own options, e.g. { enableHttp2: true }; got " + describe(value));
    const o = value as Record<string, unknown>;
    const names = Object.keys(o);
    for (const key of names) {
      if (key in owned) fail(where + '.' + key + ' is set by channel-sdk; use ' + (owned[key] || key) + ' instead');
      const allowed = values[key] && (values[key][host || ''] || values[key]['*']);
      if (allowed && accepted.indexOf(key) >= 0 && allowed.indexOf(o[key] as string) < 0) {
        fail(where + '.' + key + ' must be one of "' + allowed.join('", "') + '"' + (host ? ' on ' + host : '') + '; got ' + describe(o[key]));
      }
    }
    if (!accepted.length && names.length) fail(where + ': ' + (host || 'the host') + "'s " + what + ' takes no options beyond what channel-sdk sets; remove ' + names.join(', '));
    checkKeys(o, accepted, (host ? host + ' ' : '') + 'hostOptions key');
    return o;
  };
  const client = given === undefined ? undefined : check(given, known(host, 0).concat(accepts[1], accepts[2]), 'hostOptions', kinds.join('/'));
  // The client's options each API takes, picked once.
  const picked = accepts.map((accepted) => {
    let out: Record<string, unknown> | undefined;
    for (const key in client) if (accepted.indexOf(key) >= 0) (out || (out = {}))[key] = client[key];
    return out;
  });
  return (kind, value) => {
    const i = kinds.indexOf(kind);
    return value === undefined ? picked[i] : Object.assign({}, picked[i], check(value, accepts[i], kind + ' option hostOptions', kind));
  };
}
