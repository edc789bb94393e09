/** Percentiles and formatting shared by the benches. */

export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function summarize(samplesMs: Float64Array | number[]): {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
} {
  const sorted = Float64Array.from(samplesMs).sort();
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
  };
}

export function fmt(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

export function machine(): string {
  return `${process.platform}/${process.arch}, node ${process.version}`;
}
