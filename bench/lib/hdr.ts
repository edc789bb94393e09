/**
 * Latency recording for the capacity benches: HdrHistogram (hdr-histogram-js) in microseconds,
 * 3 significant digits, up to an hour. Client processes encode their histograms (compressed
 * base64) and the bench merges them, so percentiles are over every sample of every process rather
 * than an average of per-process percentiles.
 */
import * as hdr from 'hdr-histogram-js';

export type Histogram = hdr.Histogram;

/** The figures reported for one histogram, in milliseconds. */
export type LatencySummary = {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
};

const HIGHEST_US = 3_600_000_000;

export function newHistogram(): Histogram {
  return hdr.build({
    bitBucketSize: 64,
    autoResize: false,
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_US,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  });
}

/** Records a latency given in milliseconds (clamped to the histogram's range). */
export function recordMs(h: Histogram, ms: number): void {
  if (!Number.isFinite(ms)) return;
  h.recordValue(Math.min(HIGHEST_US, Math.max(1, Math.round(ms * 1000))));
}

export function encode(h: Histogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

export function decode(s: string): Histogram {
  return hdr.decodeFromCompressedBase64(s, 64, false);
}

/** One histogram holding every sample of `parts` (encoded or not); the parts are unchanged. */
export function merge(parts: readonly (Histogram | string)[]): Histogram {
  const out = newHistogram();
  for (const p of parts) {
    if (typeof p === 'string') {
      if (p === '') continue;
      const d = decode(p);
      out.add(d);
      d.destroy();
    } else {
      out.add(p);
    }
  }
  return out;
}

export function summary(h: Histogram): LatencySummary {
  const n = h.totalCount;
  const at = (p: number) => (n === 0 ? NaN : h.getValueAtPercentile(p) / 1000);
  return {
    n,
    p50: at(50),
    p90: at(90),
    p99: at(99),
    p999: at(99.9),
    // The highest value's bucket, as after an encode/decode (merged and local figures agree).
    max: at(100),
  };
}

/** summary() of the merge of encoded parts. */
export function mergedSummary(parts: readonly string[]): LatencySummary {
  const h = merge(parts);
  const s = summary(h);
  h.destroy();
  return s;
}
