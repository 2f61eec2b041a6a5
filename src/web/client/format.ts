const integer = new Intl.NumberFormat('en', { maximumFractionDigits: 0 })
const decimal = new Intl.NumberFormat('en', { maximumFractionDigits: 2 })

export const formatCount = (n: number) => integer.format(n)
export const formatDecimal = (n: number) => decimal.format(n)
export const formatPercent = (n: number) => `${decimal.format(n)}%`

export function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${decimal.format(seconds)} s`
  const m = Math.floor(seconds / 60)
  const rest = Math.round(seconds - m * 60)
  if (m < 60) return `${m}m ${rest}s`
  return `${Math.floor(m / 60)}h ${m % 60}m`
}

/** The change against the previous period, or null when there is nothing to compare with. */
export function change(current: number, previous: number | undefined): number | null {
  if (previous === undefined || previous === 0) return null
  return ((current - previous) / previous) * 100
}

export const formatChange = (pct: number) => `${pct > 0 ? '+' : ''}${decimal.format(pct)}%`
