/**
 * A strict reader of the Prometheus text exposition format 0.0.4, for tests: every line must be
 * empty, a HELP, a TYPE or a sample of a family whose TYPE came first; label values are unescaped; a
 * histogram's buckets must be cumulative, end with +Inf and agree with its _count. Anything else
 * throws, naming the line. (The published npm parser drops histogram labels, sums and counts.)
 */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

export interface Exposition {
  types: Map<string, string>
  samples: Sample[]
  /** The value of the one sample with this name and exactly these labels, or undefined. */
  value(name: string, labels?: Record<string, string>): number | undefined
  /** The samples of a name whose labels include `labels`. */
  find(name: string, labels?: Record<string, string>): Sample[]
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*'
/** Values as Prometheus reads them (Go's ParseFloat): Inf and NaN in any case, as prom-client writes `Nan`. */
const VALUE = '(?:[+-]?(?:[iI][nN][fF]|[nN][aA][nN])|[+-]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?)'
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (${VALUE})(?: -?\\d+)?$`)
const LABEL_PAIR = new RegExp(`^(${LABEL})="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"(,|$)`)
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped'])

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {}
  let rest = text
  while (rest.length > 0) {
    const m = LABEL_PAIR.exec(rest)
    if (!m) throw new Error(`line ${line}: malformed labels {${text}}`)
    if (m[1]! in labels) throw new Error(`line ${line}: label ${m[1]} twice`)
    labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
    rest = rest.slice(m[0].length)
    if (m[3] === '' && rest.length > 0) throw new Error(`line ${line}: text after the labels`)
  }
  return labels
}

const number = (text: string) => {
  const word = text.toLowerCase().replace(/^\+/, '')
  return word === 'inf' ? Infinity : word === '-inf' ? -Infinity : word === 'nan' ? NaN : Number(text)
}

/** The family a sample belongs to: histogram and summary samples carry suffixes. */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name
  const base = name.replace(/_(bucket|sum|count)$/, '')
  const type = types.get(base)
  return type === 'histogram' || type === 'summary' ? base : undefined
}

export function parsePrometheusText(text: string): Exposition {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline')
  const types = new Map<string, string>()
  const helps = new Set<string>()
  const samples: Sample[] = []
  const seen = new Set<string>()
  text
    .slice(0, -1)
    .split('\n')
    .forEach((raw, i) => {
      const line = i + 1
      // The format ignores empty lines (prom-client puts one after each family).
      if (raw === '') return
      if (raw.startsWith('# HELP ')) {
        const m = new RegExp(`^# HELP (${NAME}) (.*)$`).exec(raw)
        if (!m || helps.has(m[1]!)) throw new Error(`line ${line}: bad or repeated HELP: ${raw}`)
        helps.add(m[1]!)
      } else if (raw.startsWith('# TYPE ')) {
        const m = new RegExp(`^# TYPE (${NAME}) (\\w+)$`).exec(raw)
        if (!m || !TYPES.has(m[2]!) || types.has(m[1]!)) throw new Error(`line ${line}: bad or repeated TYPE: ${raw}`)
        types.set(m[1]!, m[2]!)
      } else {
        const m = SAMPLE.exec(raw)
        if (!m) throw new Error(`line ${line}: not a sample: ${JSON.stringify(raw)}`)
        if (!familyOf(m[1]!, types)) throw new Error(`line ${line}: ${m[1]} has no TYPE before it`)
        const sample = { name: m[1]!, labels: parseLabels(m[2] ?? '', line), value: number(m[3]!) }
        const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`
        if (seen.has(key)) throw new Error(`line ${line}: series repeated: ${raw}`)
        seen.add(key)
        samples.push(sample)
      }
    })
  checkHistograms(samples, types)
  const matches = (s: Sample, labels: Record<string, string>) => Object.entries(labels).every(([k, v]) => s.labels[k] === v)
  return {
    types,
    samples,
    find: (name, labels = {}) => samples.filter((s) => s.name === name && matches(s, labels)),
    value(name, labels = {}) {
      const found = samples.filter((s) => s.name === name && matches(s, labels) && Object.keys(s.labels).length === Object.keys(labels).length)
      if (found.length > 1) throw new Error(`${name}: ${found.length} series match`)
      return found[0]?.value
    },
  }
}

function checkHistograms(samples: Sample[], types: Map<string, string>) {
  for (const [family, type] of types) {
    if (type !== 'histogram') continue
    const series = new Map<string, { buckets: [number, number][]; count?: number }>()
    const keyOf = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).filter(([k]) => k !== 'le').sort())
    for (const s of samples) {
      if (s.name !== `${family}_bucket` && s.name !== `${family}_count`) continue
      const entry = series.get(keyOf(s.labels)) ?? { buckets: [] }
      series.set(keyOf(s.labels), entry)
      if (s.name.endsWith('_count')) entry.count = s.value
      else {
        if (s.labels.le === undefined) throw new Error(`${family}: a bucket without le`)
        entry.buckets.push([number(s.labels.le), s.value])
      }
    }
    for (const [key, { buckets, count }] of series) {
      const sorted = [...buckets].sort((a, b) => a[0] - b[0])
      if (sorted.at(-1)?.[0] !== Infinity) throw new Error(`${family}${key}: no +Inf bucket`)
      sorted.forEach(([, v], i) => {
        if (i > 0 && v < sorted[i - 1]![1]) throw new Error(`${family}${key}: buckets not cumulative`)
      })
      if (sorted.at(-1)![1] !== count) throw new Error(`${family}${key}: +Inf bucket ${sorted.at(-1)![1]} but _count ${count}`)
    }
  }
}
