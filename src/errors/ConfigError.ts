import { ChannelError } from './ChannelError.js';

/** An option or argument is invalid. The message names it and says what to pass instead. */
export class ConfigError extends ChannelError {
  override readonly name = 'ConfigError';
  override readonly code = 'CONFIG_ERROR' as const;
}
