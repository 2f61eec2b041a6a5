import type { Runtime } from '../../src/runtime.ts'

export interface SettleReport {
  method: 'poll' | 'optimize'
  settled: boolean
  waited_s: number
  parts: Record<string, { parts: number; rows: number }>
}

async function parts(rt: Runtime): Promise<SettleReport['parts']> {
  const rows = await rt.runner.rows<{ db: string; table: string; parts: number; rows: number }>(
    {
      name: 'bench_parts',
      sql: `SELECT database AS db, table, count() AS parts, sum(rows) AS rows FROM system.parts
            WHERE active AND database IN (currentDatabase(), 'bench_openpanel') GROUP BY db, table ORDER BY db, table`,
      params: {},
    },
    { timeoutS: 30 },
  )
  return Object.fromEntries(rows.map((r) => [`${r.db}.${r.table}`, { parts: r.parts, rows: r.rows }]))
}

/**
 * Fresh parts read about twice as slowly as merged ones, so timing waits until ClickHouse's own
 * background merges are done: no merge running and the active parts unchanged over three polls
 * (two seconds apart). No table merges itself into one part any more (migration 053), so a settled
 * table may keep several. With `optimize`, OPTIMIZE … FINAL merges each partition into one part
 * first — faster, but a state a live system rarely reaches; the report says which was used.
 */
export async function settle(rt: Runtime, opts: { optimize: boolean; maxWaitS: number; tables: string[] }): Promise<SettleReport> {
  const started = performance.now()
  if (opts.optimize) {
    for (const table of opts.tables) {
      await rt.runner.command({ name: 'bench_optimize', sql: `OPTIMIZE TABLE ${table} FINAL`, params: {} })
    }
  }
  let previous = ''
  let stable = 0
  let settled = false
  while ((performance.now() - started) / 1000 < opts.maxWaitS) {
    const [merging] = await rt.runner.rows<{ n: number }>(
      { name: 'bench_merges', sql: "SELECT count() AS n FROM system.merges WHERE database IN (currentDatabase(), 'bench_openpanel')", params: {} },
      { timeoutS: 30 },
    )
    const now = JSON.stringify(await parts(rt))
    const quiet = merging!.n === 0
    stable = quiet && now === previous ? stable + 1 : 0
    previous = now
    if (stable >= 3) {
      settled = true
      break
    }
    await new Promise((r) => setTimeout(r, 2000))
  }
  return { method: opts.optimize ? 'optimize' : 'poll', settled, waited_s: Math.round((performance.now() - started) / 1000), parts: await parts(rt) }
}
