import { TokenProviderError } from '../../errors/TokenProviderError.js';
import type { TokenManagerOptions } from './token-types.js';
import type { TokenProviderContext } from '../types.js';

/**
 * Calls tokenProvider once, bounded by tokenTimeout: past it the provider's `signal` (where the
 * host has an AbortController) aborts and the call rejects with a TokenProviderError. Resolves
 * to what the provider answered, unchecked (provider-answer.ts reads it).
 */
export function callProvider(
  options: Pick<TokenManagerOptions, 'provider' | 'tokenTimeout' | 'createAbortController'>,
  forceRefresh: boolean,
  rejected?: string,
): Promise<unknown> {
  const controller = options.createAbortController && options.createAbortController();
  return new Promise<unknown>((resolve, reject) => {
    const timer = setTimeout(() => {
      if (controller) controller.abort();
      reject(
        new TokenProviderError('tokenProvider did not settle within ' + options.tokenTimeout + ' ms (tokenTimeout); make sure it always resolves or rejects'),
      );
    }, options.tokenTimeout);
    const settle = (fn: (v: unknown) => void) => (v: unknown) => {
      clearTimeout(timer);
      fn(v);
    };
    const context: TokenProviderContext = { forceRefresh };
    if (controller) context.signal = controller.signal;
    if (rejected) context.rejected = rejected;
    new Promise<unknown>((inner) => inner(options.provider(context))).then(settle(resolve), settle(reject));
  });
}
