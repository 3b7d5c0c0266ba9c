// checkWebhook's repeat check: the same push twice has its effect once.
import { describeAnswer, duration, is2xx, safeJson, type Answer, type Reporter } from './check-report.js';
import { WINDOW_MS, type Probe } from './webhook-probe.js';

/** What the repeat check needs of checkWebhook's run. */
export interface RepeatContext extends Pick<Probe, 'fresh' | 'sign' | 'push' | 'timed'> {
  r: Reporter;
  count: () => Promise<number | undefined>;
  acceptFix: (answer: Answer) => string;
}

/** Pushes one body twice and reports whether the callback had its effect once. */
export async function checkRepeat({ r, fresh, sign, push, timed, count, acceptFix }: RepeatContext, dupTitle: string): Promise<void> {
  const body = fresh();
  const signature = sign(body);
  const before = await count();
  const once = timed(await push(body, signature), 'first copy');
  if (!is2xx(once)) return r.fail('duplicate', dupTitle, `the first copy: ${describeAnswer(once)}`, acceptFix(once));
  const between = await count();
  // A receiver that leases a push while it runs may refuse a repeat until the first is done
  // (the service retries): repeat until one is answered 2xx, within the window.
  const started = performance.now();
  const refusals: string[] = [];
  let again: Answer;
  for (;;) {
    again = await push(body, signature);
    if (is2xx(again) || again.error !== undefined || performance.now() - started > WINDOW_MS) break;
    refusals.push(`HTTP ${again.status}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  timed(again, 'repeated push');
  const after = await count();
  const retried = refusals.length
    ? ` after ${refusals.length} refusal${refusals.length === 1 ? '' : 's'} (${[...new Set(refusals)].join(', ')}) while the first was finishing`
    : '';
  if (!is2xx(again)) {
    return r.fail(
      'duplicate',
      dupTitle,
      `a repeat of a push it had acknowledged: ${describeAnswer(again)}${refusals.length ? ` (${refusals.length + 1} tries over ${duration(Math.round(performance.now() - started))})` : ''}`,
      'answer 2xx to a push you already handled, or the service records a failure and sends it again (createWebhookHandler with dedup answers {"duplicate":true})',
    );
  }
  const dedupFix =
    'remember the pushes you handled: dedup: createMemoryDedupStore() (createRedisDedupStore(redis) across instances), or make the callback an idempotent upsert by order_no (compareLogistics)';
  if (before !== undefined && between !== undefined && after !== undefined) {
    if (between - before < 1) {
      r.warn(
        'duplicate',
        dupTitle,
        `effects() went ${before} → ${between} for a new push, so it cannot show a repeat; the repeat got HTTP ${again.status}${retried}`,
        'return from effects() a count your callback raises on every push it handles',
      );
    } else if (after > between) {
      r.fail(
        'duplicate',
        dupTitle,
        `the repeat got HTTP ${again.status}${retried} and the callback had its effect again (effects ${before} → ${between} → ${after})`,
        dedupFix,
      );
    } else r.pass('duplicate', dupTitle, `the repeat got HTTP ${again.status}${retried}; effects ${before} → ${between} → ${after}`);
    return;
  }
  const marked = (safeJson(again.text) as { duplicate?: unknown } | undefined)?.duplicate === true;
  if (marked) r.pass('duplicate', dupTitle, `the repeat got HTTP ${again.status} {"duplicate":true}${retried}: handled once`);
  else {
    r.warn(
      'duplicate',
      dupTitle,
      `the repeat got HTTP ${again.status} like a new push${retried}: whether the callback ran twice cannot be seen from outside`,
      dedupFix + '; checkWebhook({ effects }) checks it exactly',
    );
  }
}
