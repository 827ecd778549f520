import type { Measurement } from './measurement.ts';

/** The scenario every ratio is against. */
export const BASELINE = 'bare';

/** Each scenario's measurement, and its references as sampled alongside it. */
export type RunResults = Map<string, { measured: Measurement; references: Map<string, Measurement> }>;

/** What one scenario is judged on: every result so far, its references being its own samples. */
export type Results = ReadonlyMap<string, Measurement>;

export function resultsFor(run: RunResults, id: string): Results {
  const view = new Map([...run].map(([key, result]) => [key, result.measured]));
  for (const [key, sample] of run.get(id)?.references ?? []) view.set(key, sample);
  return view;
}

/** One pass/fail line of the targets. */
export type Target = { label: string; met(own: Measurement, results: Results): boolean };

function reference(results: Results, id: string): Measurement {
  const measured = results.get(id);
  if (!measured) throw new Error(`target refers to scenario "${id}", which has not run before it`);
  return measured;
}

export const rateAtLeast = (id: string, fraction: number): Target => ({
  label: `rate >= ${Math.round(fraction * 100)}% of ${id}`,
  met: (own, results) => own.rate >= fraction * reference(results, id).rate,
});

export const p99Below = (ms: number): Target => ({
  label: `p99 < ${ms} ms`,
  met: (own) => own.p99 < ms,
});

export const p99AtMostTimes = (id: string, factor: number): Target => ({
  label: `p99 <= ${factor}x ${id} p99`,
  met: (own, results) => own.p99 <= factor * reference(results, id).p99,
});

/** Alike: the rate is within `fraction` of the reference's either way (0.8: between 80% and 125%). */
export const rateAlike = (id: string, fraction: number): Target => ({
  label: `rate within ${Math.round(fraction * 100)}%..${Math.round(100 / fraction)}% of ${id}`,
  met: (own, results) => {
    const ratio = own.rate / reference(results, id).rate;
    return ratio >= fraction && ratio <= 1 / fraction;
  },
});

/** A rate this machine must reach whatever else is measured (events out: 1,000 a second). */
export const rateAbove = (perSecond: number): Target => ({
  label: `rate >= ${perSecond}/s`,
  met: (own) => own.rate >= perSecond,
});

/**
 * A fast path's row (gateway/src/fast-paths/): the reference, which has it, runs at least
 * `1 + fraction` times this row's rate, which lacks it. Less, and the fast path goes.
 */
export const fastPathBuys = (id: string, fraction: number): Target => ({
  label: `${id} >= ${Math.round((1 + fraction) * 100)}% of this (the fast path buys ${Math.round(fraction * 100)}%)`,
  met: (own, results) => reference(results, id).rate >= (1 + fraction) * own.rate,
});
