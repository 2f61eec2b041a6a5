/** Quantiles by the nearest-rank method: p99 of 200 samples is the 198th smallest. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.max(1, Math.ceil(q * sorted.length))
  return sorted[rank - 1]!
}

export const round = (x: number, digits = 1) => (Number.isFinite(x) ? Math.round(x * 10 ** digits) / 10 ** digits : x)

export interface Summary {
  n: number
  p50: number
  p90: number
  p99: number
  max: number
  mean: number
}

export function summarize(values: readonly number[]): Summary {
  return {
    n: values.length,
    p50: round(quantile(values, 0.5), 2),
    p90: round(quantile(values, 0.9), 2),
    p99: round(quantile(values, 0.99), 2),
    // A load phase records hundreds of thousands of latencies: too many to spread into arguments.
    max: round(values.reduce((a, b) => Math.max(a, b), values.length ? -Infinity : NaN), 2),
    mean: round(values.reduce((a, b) => a + b, 0) / (values.length || 1), 2),
  }
}
