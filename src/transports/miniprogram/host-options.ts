import { checkKeys, describeValue, fail } from '../../shared/check.js';
import type { CallKind } from '../../core/platform.js';

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
 * Kept as strings (the smallest form to ship): `key=a,b` restricts the key's values.
 */
const wxRequest =
  'dataType responseType=text,arraybuffer enableHttp2 enableQuic enableCache enableHttpDNS httpDNSServiceId httpDNSTimeout enableHttpDNSFallback enableChunked enableProfile forceCellularNetwork redirect useHighPerformanceMode';
const wxFiles = 'enableHttp2 enableQuic enableProfile useHighPerformanceMode';
const wx = wxRequest + '|' + wxFiles + '|' + wxFiles;
const lists: Record<string, string> = {
  wx,
  qq: wx,
  my: 'dataType=json,text,base64,arraybuffer referrerStrategy enableCookie|fileType=image,video,audio hideLoading|',
  tt: 'dataType=json,string responseType=text,arraybuffer||',
  swan: 'dataType=json,string responseType=text,arraybuffer||',
  uni: 'dataType responseType=text,arraybuffer sslVerify withCredentials firstIpv4 enableHttp2 enableQuic enableCache enableHttpDNS httpDNSServiceId enableChunked forceCellularNetwork enableCookie cloudCache defer|fileType=image,video,audio file|',
  Taro: 'dataType responseType=text,arraybuffer useHighPerformanceMode enableHttp2 enableQuic enableCache enableHttpDNS httpDNSServiceId enableChunked forceCellularNetwork enableCookie referrerStrategy jsonp jsonpCache mode credentials cache retryTimes backup dataCheck useStore storeCheckKey storeSign storeCheck|fileName withCredentials fileType=image,video,audio|withCredentials',
};
const kinds: CallKind[] = ['request', 'upload', 'download'];

// Keys the SDK sets itself, refused with the option to use instead ('' names the option of that name).
const owned: Record<string, string> = {
  url: 'the path argument',
  method: 'the method option',
  data: 'json or body',
  header: 'headers',
  headers: '',
  timeout: '',
  filePath: '',
  name: '',
  formData: '',
  signal: '',
  success: 'the returned promise',
  fail: 'the returned promise',
  complete: 'the returned promise',
};

/**
 * What `host` takes for the `i`th kind of call: each key with the values it may have ('' for
 * any; the ones that change how the body arrives are checked, since the SDK reads it). For a
 * host we cannot name, what any known host takes.
 */
function known(host: string | undefined, i: number): Record<string, string> {
  const all: Record<string, string> = {};
  for (const name in lists) {
    if (host && lists[host] && name !== host) continue;
    for (const entry of lists[name].split('|')[i].split(' ')) {
      const [key, allowed = ''] = entry.split('=');
      if (key) all[key] = key in all && !all[key] ? '' : allowed;
    }
  }
  return all;
}

/**
 * `hostOptions` for a client on `host` (a name from host-globals.ts, or undefined when unknown): the
 * client's own `given` checked against every list of the host, and a function that checks a
 * call's own against the list of its API and adds the client's that API takes. An unknown key
 * is a ConfigError with "did you mean"; a key the SDK sets names the option to use instead.
 */
export function hostOptionsFor(host: string | undefined, given: unknown): (kind: CallKind, value: unknown) => Record<string, unknown> | undefined {
  const accepts = kinds.map((_, i) => known(host, i));
  const check = (value: unknown, accepted: Record<string, string>, where: string, what: string): Record<string, unknown> => {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      fail(where + " must be an object of the host's own options, e.g. { enableHttp2: true }; got " + describeValue(value));
    const o = value as Record<string, unknown>;
    const names = Object.keys(o);
    for (const key of names) {
      if (key in owned) fail(where + '.' + key + ' is set by channel-sdk; use ' + (owned[key] || key) + ' instead');
      const allowed = accepted[key];
      if (allowed && allowed.split(',').indexOf(o[key] as string) < 0)
        fail(where + '.' + key + ' must be one of "' + allowed.replace(/,/g, '", "') + '"' + (host ? ' on ' + host : '') + '; got ' + describeValue(o[key]));
    }
    const keys = Object.keys(accepted);
    if (!keys.length && names.length)
      fail(where + ': ' + (host || 'the host') + "'s " + what + ' takes no options beyond what channel-sdk sets; remove ' + names.join(', '));
    checkKeys(o, keys, (host ? host + ' ' : '') + 'hostOptions key');
    return o;
  };
  const client = given === undefined ? undefined : check(given, Object.assign({}, accepts[2], accepts[1], accepts[0]), 'hostOptions', kinds.join('/'));
  // The client's options each API takes, picked once.
  const picked = accepts.map((accepted) => {
    let out: Record<string, unknown> | undefined;
    for (const key in client) if (key in accepted) (out || (out = {}))[key] = client[key];
    return out;
  });
  return (kind, value) => {
    const i = kinds.indexOf(kind);
    return value === undefined ? picked[i] : Object.assign({}, picked[i], check(value, accepts[i], kind + ' option hostOptions', kind));
  };
}
