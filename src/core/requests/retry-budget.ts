// The retry budget (issue #45): the retries of transient failures of one client draw on one
// balance that answers refill, in the spirit of gRPC's retry throttling and Envoy's retry budgets,
// so that an outage meets the load of the calls themselves plus a few retries, not three times it.
import { checkKeys, describeValue, fail } from '../../shared/check.js';
import type { RetryBudgetOptions } from '../app-life/pacing-types.js';

/** A client's retry budget. */
export interface RetryBudget {
  /**
   * Takes one retry from the budget, or says there is none left. `told`: the server said when
   * to come back (`Retry-After`): such a retry is made even from an empty budget, which it
   * empties further (never below 0).
   */
  take(told: boolean): boolean;
  /** An answer that was not a transient failure: the budget refills by `ratio`. */
  earn(): void;
}

const defaults = { max: 10, ratio: 0.1 };
const shape = 'retryBudget must be false (no budget) or { max: retries 0-1000, ratio: 0-1 per answer }';

/** Checks the `retryBudget` option: undefined (the defaults), false (none) or {@link RetryBudgetOptions}. */
export function retryBudgetOptions(value: unknown): Required<RetryBudgetOptions> | false {
  if (value === false) return false;
  if (value === undefined) return defaults;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(shape + '; got ' + describeValue(value));
  checkKeys(value, ['max', 'ratio'], 'retryBudget option');
  const o = Object.assign({}, defaults, value);
  if (!(typeof o.max === 'number' && o.max >= 0 && o.max <= 1000))
    fail('retryBudget.max must be a number of retries from 0 to 1000; got ' + describeValue(o.max));
  if (!(typeof o.ratio === 'number' && o.ratio >= 0 && o.ratio <= 1))
    fail('retryBudget.ratio must be a number from 0 to 1 (what each answer puts back); got ' + describeValue(o.ratio));
  return o;
}

/** A budget that starts full; none for `false`. */
export function createRetryBudget(o: Required<RetryBudgetOptions> | false): RetryBudget | undefined {
  if (!o) return undefined;
  let balance = o.max;
  return {
    take(told) {
      // A tenth added ten times is 0.9999999999999999: the epsilon keeps the promised arithmetic.
      const left = balance >= 1 - 1e-9;
      if (left || told) balance = Math.max(0, balance - 1);
      return left || told;
    },
    earn() {
      balance = Math.min(o.max, balance + o.ratio);
    },
  };
}
