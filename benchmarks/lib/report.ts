/** Writes a benchmark run as JSON, a Markdown table and an SVG latency plot (no plotting dependency). */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

type Any = any

const AGGREGATE_EXCLUDED = new Set(['live', 'export_events', 'export_events_deep', 'export_charts'])
const fmt = (x: number | undefined, digits = 1) => (x === undefined || !Number.isFinite(x) ? '–' : x >= 100 ? x.toFixed(0) : x.toFixed(digits))

export interface TargetRow {
  what: string
  target: string
  measured: string
  met: boolean | undefined
  scope: string
}

/** Issue 8's targets against a run; `met` is undefined where the run has no figure for it. */
export function evaluateTargets(r: Any): TargetRow[] {
  const cells: Any[] = r.latency ?? []
  const rows: TargetRow[] = []
  const scope = `${r.data.note}, ${r.data.events.toLocaleString()} events`
  const worst = (list: Any[], key: 'p50' | 'p99') =>
    list.reduce((w: Any, c: Any) => (!w || c.http[key] > w.http[key] ? c : w), undefined)

  const m30 = cells.filter((c) => c.role === 'M' && c.window === '30d' && !AGGREGATE_EXCLUDED.has(c.endpoint))
  if (m30.length) {
    const w50 = worst(m30, 'p50')
    const w99 = worst(m30, 'p99')
    rows.push({
      what: 'M project, every aggregate endpoint, 30d',
      target: 'p50 ≤ 30 ms, p99 ≤ 60 ms (at 100M)',
      measured: `worst p50 ${fmt(w50.http.p50)} ms (${w50.endpoint}), worst p99 ${fmt(w99.http.p99)} ms (${w99.endpoint}); ${m30.filter((c) => c.http.p50 <= 30 && c.http.p99 <= 60).length}/${m30.length} endpoints within`,
      met: w50.http.p50 <= 30 && w99.http.p99 <= 60,
      scope: `M = ${r.data.M.id}, ${r.data.M.events.toLocaleString()} events; ${scope}`,
    })
  }
  const l30 = cells.filter((c) => c.role === 'L' && c.window === '30d' && c.endpoint !== 'live')
  if (l30.length) {
    const w = worst(l30, 'p50')
    rows.push({
      what: 'L project, 30d, every endpoint',
      target: 'p50 ≤ 150 ms (L ≈ 16M events)',
      measured: `worst p50 ${fmt(w.http.p50)} ms (${w.endpoint}); ${l30.filter((c) => c.http.p50 <= 150).length}/${l30.length} endpoints within`,
      met: w.http.p50 <= 150,
      scope: `L = ${r.data.L.id}, ${r.data.L.events.toLocaleString()} events; ${scope}`,
    })
  }
  const live = cells.filter((c) => c.endpoint === 'live')
  if (live.length) {
    const w = worst(live, 'p50')
    rows.push({ what: '/live', target: 'p50 ≤ 10 ms', measured: `p50 ${live.map((c) => `${c.role} ${fmt(c.http.p50)} ms`).join(', ')} (uncached)`, met: w.http.p50 <= 10, scope })
  }
  if (cells.length) {
    const overheads = cells.map((c) => c.paired_overhead_p50_ms).sort((a: number, b: number) => a - b)
    const agg = cells.filter((c) => !c.endpoint.startsWith('export_events'))
    const aggOver = agg.map((c) => c.paired_overhead_p50_ms).sort((a: number, b: number) => a - b)
    const med = (xs: number[]) => xs[Math.floor(xs.length / 2)]!
    rows.push({
      what: 'overhead over the bare SQL',
      target: '≤ 3 ms at p50',
      measured: `paired p50 (HTTP − bare, same iteration): median over cells ${fmt(med(overheads), 2)} ms, worst ${fmt(overheads.at(-1), 2)} ms; without /export/events pages: median ${fmt(med(aggOver), 2)}, worst ${fmt(aggOver.at(-1), 2)} ms`,
      met: (overheads.at(-1) ?? Infinity) <= 3,
      scope,
    })
  }
  const peerL = cells.filter((c) => c.role === 'L' && c.peer)
  if (peerL.length) {
    const w = peerL.reduce((a: Any, c: Any) => (!a || c.peer_over_bare < a.peer_over_bare ? c : a), undefined)
    const wHttp = peerL.reduce((a: Any, c: Any) => (!a || c.peer_over_http < a.peer_over_http ? c : a), undefined)
    rows.push({
      what: "versus OpenPanel's SQL, L project",
      target: '≥ 3× faster on breakdowns and /metrics',
      measured: `peer p50 / Quarry bare p50: min ${fmt(w.peer_over_bare, 2)}× (${w.endpoint} ${w.window}); peer / Quarry over HTTP: min ${fmt(wHttp.peer_over_http, 2)}×; ${peerL.filter((c) => c.peer_over_bare >= 3).length}/${peerL.length} cells ≥ 3×`,
      met: w.peer_over_bare >= 3,
      scope,
    })
  }
  const byName = (prefix: string) => (r.throughput ?? []).find((t: Any) => t.name.startsWith(prefix))
  const warm = byName('warm cache')
  if (warm) rows.push({ what: 'warm cache, c=32', target: '≥ 10,000 req/s, p99 ≤ 10 ms', measured: `${Math.round(warm.rps).toLocaleString()} req/s, p99 ${fmt(warm.latency.p99)} ms`, met: warm.rps >= 10_000 && warm.latency.p99 <= 10, scope })
  const wr = r.warm_ratio
  if (wr) {
    const rounds = wr.rounds.map((w: Any) => `${fmt(w.ratio, 2)} (${Math.round(w.warm_rps).toLocaleString()} / ${Math.round(w.healthz_rps).toLocaleString()})`).join(', ')
    rows.push({ what: 'warm cache against GET /healthz, c=32', target: '≥ 0.8×, median of rounds', measured: `${fmt(wr.median, 2)}×; by round: ${rounds} req/s`, met: wr.median >= 0.8, scope })
  }
  if (r.stampede) {
    const s = r.stampede
    rows.push({
      what: 'cold stampede, c=32 over 99 keys',
      target: 'p99 ≤ 2× the slowest single query',
      measured: `p99 ${fmt(s.result.latency.p99)} ms vs slowest single ${fmt(s.slowest_single_ms)} ms (${fmt(s.p99_over_slowest, 2)}×); queries run: ${s.result.cache.miss ?? '?'} of ${s.result.requests} requests`,
      met: s.p99_over_slowest <= 2,
      scope,
    })
  }
  const uncached = byName('uncached')
  if (uncached) {
    const errors = Object.entries(uncached.statuses).filter(([k]) => k !== '200').reduce((n, [, v]) => n + Number(v), 0)
    rows.push({ what: 'uncached, c=32, M/S projects, 30d', target: '≥ 40 req/s, no errors', measured: `${fmt(uncached.rps)} req/s, p50 ${fmt(uncached.latency.p50)} ms, p99 ${fmt(uncached.latency.p99)} ms, ${errors} errors`, met: uncached.rps >= 40 && errors === 0, scope })
  }
  const ex = r.export?.results as Any[] | undefined
  if (ex) {
    const csv = ex.find((e) => e.case === 'csv')
    const nd = ex.find((e) => e.case === 'ndjson')
    const growth = Math.max(...ex.map((e) => e.server_rss_growth_mb ?? e.rss_growth_mb ?? 0))
    if (csv && nd) {
      rows.push({
        what: 'export',
        target: 'CSV ≥ 1M rows/s, NDJSON ≥ 0.5M rows/s, RSS growth ≤ 256 MB',
        measured: `CSV ${(csv.rows_per_s / 1e6).toFixed(2)}M rows/s (${fmt(csv.mb_per_s)} MB/s), NDJSON ${(nd.rows_per_s / 1e6).toFixed(2)}M rows/s (${fmt(nd.mb_per_s)} MB/s), RSS growth ≤ ${growth} MB over ${ex[0].rows.toLocaleString()} rows`,
        met: csv.rows_per_s >= 1e6 && nd.rows_per_s >= 5e5 && growth <= 256,
        scope: `export-stream.ts, ${r.export.events?.toLocaleString()} events, load ${r.export.load_average?.join(' ') ?? '?'}`,
      })
    }
  }
  return rows
}

function markdown(r: Any): string {
  const out: string[] = []
  out.push(`# Quarry benchmark — ${r.data.note} (${r.mode})`, '')
  out.push(`- Run: ${r.date} → ${r.finished}`)
  out.push(`- Machine: ${r.machine.cores} cores (${r.machine.cpu}), ${r.machine.memory_gb} GB, Node ${r.machine.node}`)
  out.push(`- Engine: ${r.engine.mode} ClickHouse ${r.engine.version} (chDB in process), query gate ${r.engine.gate_concurrency}${r.engine.read_lanes === undefined ? '' : `, read lanes ${r.engine.read_lanes}`}`)
  out.push(`- Load average (1/5/15 min): start ${r.load_average.start.join(' ')}, end ${r.load_average.end.join(' ')} — other work shared the machine; compare ratios measured in the same iteration rather than absolute times across runs`)
  out.push(`- Data: ${r.data.events.toLocaleString()} events in ${r.data.projects} projects; L = ${r.data.L.id} (${r.data.L.events.toLocaleString()} events), M = ${r.data.M.id} (${r.data.M.events.toLocaleString()}); last event ${r.data.data_end}`)
  out.push(`- Windows: ${Object.entries(r.data.windows).map(([k, v]) => `${k} = ${v}`).join('; ')}`)
  const s = r.data.settle
  out.push(`- Merges: ${s.method === 'optimize' ? 'OPTIMIZE … FINAL, then ' : ''}waited ${s.waited_s} s for background merges (${s.settled ? 'settled' : 'NOT settled within the limit'}); active parts: ${Object.entries(s.parts).map(([t, p]: [string, Any]) => `${t} ${p.parts}`).join(', ')}`)
  out.push(`- Requests per latency cell: up to ${r.settings.requests} (at least ${r.settings.min_requests}; a cell stops after ${r.settings.budget_s} s once it has the minimum), after 2 warm-up iterations; \`n\` is what each cell got`)
  out.push('')
  out.push('## Targets (issue 8)', '')
  out.push('| what | target | measured | met |', '|---|---|---|---|')
  for (const t of evaluateTargets(r)) out.push(`| ${t.what} | ${t.target} | ${t.measured} | ${t.met === undefined ? '–' : t.met ? 'yes' : '**no**'} |`)
  out.push('')
  if (r.latency?.length) {
    out.push('## Latency at concurrency 1 (ms)', '')
    out.push('HTTP = real request through the server (keep-alive, node:http client in the same process); db = the server\'s own Server-Timing db;dur (summed over a route\'s parallel statements); bare = the exact statements of `explain=sql` run on the engine\'s client in process (no gate, no HTTP); overhead = median over iterations of HTTP − bare measured back to back; peer = OpenPanel\'s SQL for the same window on its sessions table, and peer/bare its p50 over Quarry\'s bare p50.', '')
    out.push('| proj | window | endpoint | n | HTTP p50 | HTTP p99 | db p50 | bare p50 | bare p99 | overhead p50 | HTTP/bare | peer p50 | peer/bare | peer/HTTP | load 1m |')
    out.push('|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
    for (const c of r.latency) {
      out.push(
        `| ${c.role} | ${c.window} | ${c.endpoint}${c.from_sealed ? ' (sealed)' : ''}${c.note ? ` (${c.note})` : ''} | ${c.n} | ${fmt(c.http.p50)} | ${fmt(c.http.p99)} | ${fmt(c.db.p50)} | ${fmt(c.bare.p50)} | ${fmt(c.bare.p99)} | ${fmt(c.paired_overhead_p50_ms, 2)} | ${fmt(c.overhead_ratio, 2)} | ${fmt(c.peer?.p50)} | ${c.peer ? `${fmt(c.peer_over_bare, 2)}×` : '–'} | ${c.peer ? `${fmt(c.peer_over_http, 2)}×` : '–'} | ${c.load[0]} |`,
      )
    }
    out.push('')
  }
  if (r.cache?.length || r.throughput?.length) {
    out.push('## Cache and throughput', '')
    out.push('| phase | c | requests | seconds | req/s | p50 ms | p99 ms | max ms | statuses | X-Quarry-Cache | load 1m | note |', '|---|--:|--:|--:|--:|--:|--:|--:|---|---|--:|---|')
    for (const c of r.cache ?? []) out.push(`| ${c.name} | 1 | ${c.latency.n} | | | ${fmt(c.latency.p50, 2)} | ${fmt(c.latency.p99, 2)} | ${fmt(c.latency.max, 2)} | | | ${c.load[0]} | in process client |`)
    for (const t of r.throughput ?? []) {
      out.push(`| ${t.name} | ${t.concurrency} | ${t.requests} | ${t.seconds} | ${fmt(t.rps)} | ${fmt(t.latency.p50, 2)} | ${fmt(t.latency.p99, 2)} | ${fmt(t.latency.max, 2)} | ${JSON.stringify(t.statuses)} | ${JSON.stringify(t.cache)} | ${t.load[0]} | ${t.note ?? ''} |`)
    }
    if (r.stampede) out.push('', `Stampede: single requests to the ${r.stampede.keys} keys at c=1 before it: p50 ${fmt(r.stampede.single_c1.p50)} ms, slowest ${fmt(r.stampede.slowest_single_ms)} ms, sum ${fmt(r.stampede.single_c1.mean * r.stampede.keys, 0)} ms.`)
    out.push('')
  }
  const ex = r.export
  if (ex?.results) {
    out.push(`## Export (benchmarks/export-stream.ts: ${ex.events?.toLocaleString()} events, load ${ex.load_average?.join(' ')})`, '')
    out.push('| case | rows | MB | s | first byte ms | rows/s | MB/s | server RSS growth MB |', '|---|--:|--:|--:|--:|--:|--:|--:|')
    for (const e of ex.results) out.push(`| ${e.case} | ${e.rows.toLocaleString()} | ${e.mb} | ${e.seconds} | ${e.first_byte_ms} | ${e.rows_per_s.toLocaleString()} | ${e.mb_per_s} | ${e.server_rss_growth_mb ?? e.rss_growth_mb} |`)
    out.push('')
  } else if (ex) out.push(`## Export`, '', `not measured: ${JSON.stringify(ex)}`, '')
  return `${out.join('\n')}\n`
}

/** p50 bars with p99 whiskers per endpoint, log scale, one bar per project × window. */
function svg(r: Any): string {
  const cells: Any[] = r.latency ?? []
  const endpoints = [...new Set(cells.map((c) => c.endpoint))]
  const series = [...new Set(cells.map((c) => `${c.role} ${c.window}`))]
  const colors = ['#93c5fd', '#3b82f6', '#1e3a8a', '#fca5a5', '#ef4444', '#7f1d1d', '#a3a3a3']
  const bar = 7
  const rowH = series.length * (bar + 1) + 10
  const left = 170
  const width = 900
  const top = 50
  const height = top + endpoints.length * rowH + 40
  const min = 0.5
  const max = Math.max(10_000, ...cells.map((c) => c.http.p99 || 0))
  const x = (ms: number) => Math.round(10 * (left + ((Math.log10(Math.max(ms, min)) - Math.log10(min)) / (Math.log10(max) - Math.log10(min))) * (width - left - 20))) / 10
  const parts: string[] = []
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`)
  parts.push(`<rect width="100%" height="100%" fill="white"/>`)
  parts.push(`<text x="10" y="18" font-size="14" font-weight="bold">Quarry latency per endpoint — ${r.data.note}, ${r.date.slice(0, 16)}Z, load ${r.load_average.start[0]}</text>`)
  parts.push(`<text x="10" y="34">bar = HTTP p50, whisker to p99 (ms, log scale), concurrency 1; dashed: targets 10 / 30 / 60 / 150 ms</text>`)
  for (const t of [1, 10, 100, 1000, 10000].filter((t) => t <= max)) {
    parts.push(`<line x1="${x(t)}" y1="${top - 6}" x2="${x(t)}" y2="${height - 30}" stroke="#e5e5e5"/>`)
    parts.push(`<text x="${x(t)}" y="${height - 16}" text-anchor="middle">${t} ms</text>`)
  }
  for (const t of [10, 30, 60, 150]) parts.push(`<line x1="${x(t)}" y1="${top - 6}" x2="${x(t)}" y2="${height - 30}" stroke="#16a34a" stroke-dasharray="3,3"/>`)
  series.forEach((s, i) => {
    parts.push(`<rect x="${left + i * 90}" y="${top - 14}" width="10" height="8" fill="${colors[i % colors.length]}"/>`)
    parts.push(`<text x="${left + i * 90 + 14}" y="${top - 7}">${s}</text>`)
  })
  endpoints.forEach((e, row) => {
    const y0 = top + row * rowH
    parts.push(`<text x="${left - 6}" y="${y0 + rowH / 2 + 3}" text-anchor="end">${e}</text>`)
    series.forEach((s, i) => {
      const c = cells.find((c) => c.endpoint === e && `${c.role} ${c.window}` === s)
      if (!c) return
      const y = y0 + 4 + i * (bar + 1)
      parts.push(`<rect x="${left}" y="${y}" width="${Math.max(1, x(c.http.p50) - left)}" height="${bar}" fill="${colors[i % colors.length]}"><title>${e} ${s}: p50 ${c.http.p50} ms, p99 ${c.http.p99} ms, bare p50 ${c.bare.p50} ms</title></rect>`)
      parts.push(`<line x1="${x(c.http.p50)}" y1="${y + bar / 2}" x2="${x(c.http.p99)}" y2="${y + bar / 2}" stroke="#404040"/>`)
      parts.push(`<line x1="${x(c.http.p99)}" y1="${y}" x2="${x(c.http.p99)}" y2="${y + bar}" stroke="#404040"/>`)
    })
  })
  parts.push('</svg>')
  return `${parts.join('\n')}\n`
}

export function writeReport(dir: string, name: string, report: Any): string[] {
  mkdirSync(dir, { recursive: true })
  const files = [join(dir, `${name}.json`), join(dir, `${name}.md`), join(dir, `${name}.svg`)]
  writeFileSync(files[0]!, `${JSON.stringify({ ...report, targets: evaluateTargets(report) }, null, 2)}\n`)
  writeFileSync(files[1]!, markdown(report))
  writeFileSync(files[2]!, svg(report))
  return files
}
