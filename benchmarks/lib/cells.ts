import { writeFileSync } from 'node:fs'
import type { Agent } from 'node:http'
import { cpus, loadavg, totalmem } from 'node:os'
import { get, type Reply } from './http.mjs'
import { round, summarize } from './stats.ts'

/** One kind of request a latency script times: its name in the report and the URL it asks. */
export interface Cell {
  name: string
  url: string
}

export interface CellOptions {
  /** Requests timed per cell, after `warmup` untimed ones. */
  runs: number
  warmup: number
  headers: Record<string, string>
  agent: Agent
  /** A status counted rather than thrown (a statement past the query timeout answers 504). */
  tolerated?: number
  /** Each timed 200, for what a script reports besides the common figures. */
  seen?: (cell: number, reply: Reply) => void
  /** After each round, with its number (from 1). */
  round?: (done: number) => void
}

export interface CellSamples {
  ms: number[]
  /** The engine's share of each, from Server-Timing. */
  db: number[]
  /** The 1-minute load average when each was answered. */
  loads: number[]
  /** Answers with the tolerated status. */
  tolerated: number
}

/**
 * Asks every cell once per round, in an order rotated by the round, so that a loaded machine
 * weighs on all cells alike; anything but a 200 (or the tolerated status, counted) stops the run.
 */
export async function sampleCells(cells: readonly Cell[], o: CellOptions): Promise<CellSamples[]> {
  const samples = cells.map((): CellSamples => ({ ms: [], db: [], loads: [], tolerated: 0 }))
  for (let i = 0; i < o.runs + o.warmup; i++) {
    for (let k = 0; k < cells.length; k++) {
      const index = (i + k) % cells.length
      const cell = cells[index]!
      const reply = await get(cell.url, o.headers, o.agent)
      const s = samples[index]!
      if (reply.status !== 200) {
        if (reply.status !== o.tolerated) throw new Error(`${cell.name}: ${reply.status} ${reply.body.toString().slice(0, 300)}`)
        s.tolerated++
        continue
      }
      if (i < o.warmup) continue
      s.ms.push(reply.ms)
      s.db.push(Number(/db;dur=([\d.]+)/.exec(String(reply.headers['server-timing'] ?? ''))?.[1] ?? NaN))
      s.loads.push(loadavg()[0]!)
      o.seen?.(index, reply)
    }
    o.round?.(i + 1)
  }
  return samples
}

/** The figures every latency report gives a cell. */
export function cellFigures(s: CellSamples) {
  const http = summarize(s.ms)
  return {
    http_p50_ms: http.p50,
    http_p90_ms: http.p90,
    http_p99_ms: http.p99,
    db_p50_ms: summarize(s.db).p50,
    load1_mean: round(s.loads.reduce((a, b) => a + b, 0) / s.loads.length, 2),
  }
}

/** Writes benchmarks/results/<name>.json: when and on what machine, then the script's own fields. */
export function saveReport(name: string, fields: Record<string, unknown>): void {
  const report = {
    date: new Date().toISOString(),
    machine: { cores: cpus().length, model: cpus()[0]?.model, memory_gb: Math.round(totalmem() / 2 ** 30) },
    ...fields,
  }
  writeFileSync(new URL(`../results/${name}.json`, import.meta.url), `${JSON.stringify(report, null, 2)}\n`)
}
