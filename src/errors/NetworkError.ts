import { ChannelError, type ErrorContext } from './ChannelError.js';

/** No HTTP response: connection refused or reset, DNS failure, offline, CORS. Retried for idempotent methods. */
export class NetworkError extends ChannelError {
  override readonly name = 'NetworkError';
  override readonly code = 'NETWORK_ERROR' as const;
  /** A mini-program host's `errMsg` (or Alipay's `errorMessage`), as it reported the failure. */
  readonly errMsg?: string;
  /** A mini-program host's numeric code: WeChat `errno`, Alipay `error`, Baidu `errCode`. */
  readonly errno?: number;
  /**
   * True when the host (or the browser) reported no network: the call was not sent, or what was
   * sent failed while offline. README "The app's life and the network".
   */
  readonly offline: boolean;

  constructor(message: string, context: ErrorContext & { errMsg?: string; errno?: number; offline?: boolean } = {}) {
    super(message, context);
    if (context.errMsg !== undefined) this.errMsg = context.errMsg;
    if (context.errno !== undefined) this.errno = context.errno;
    this.offline = context.offline === true;
  }
}
