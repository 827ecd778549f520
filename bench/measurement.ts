/** What every scenario reports: a rate (per second) and latency percentiles in ms. */
export type Measurement = { rate: number; p50: number; p99: number; count: number };

export function percentile(sorted: number[], fraction: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function summarize(latenciesMs: number[], elapsedMs: number): Measurement {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return {
    rate: (sorted.length * 1000) / elapsedMs,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    count: sorted.length,
  };
}
