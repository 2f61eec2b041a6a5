import type { QueryRunner, RunOptions, Statement } from '../../src/clickhouse/run.ts'

/**
 * Statements by name (a route's dimension after `:` left off): how many ran, their wall ms in the
 * runner (the wait for a gate slot included), and the engine's ms of those that ran for a request
 * (the runner's QueryStats.dbMs: from the gate's slot on, a wait for the line or a lane included).
 */
export type Tally = Record<string, { n: number; ms: number; engineMs: number }>

/**
 * A runner that counts the statements sent through it while counting is on: the profile of a load
 * phase (which statements its requests cost, planning reads and snapshot writes included).
 */
export function tallyStatements(runner: QueryRunner): { runner: QueryRunner; start(): void; stop(): Tally } {
  let tally: Tally | undefined
  const timed =
    <O extends RunOptions | undefined, R>(send: (stmt: Statement, opts: O) => Promise<R>) =>
    async (stmt: Statement, opts: O): Promise<R> => {
      const into = tally
      const t0 = performance.now()
      const db0 = opts?.stats?.dbMs ?? 0
      try {
        return await send(stmt, opts)
      } finally {
        if (into) {
          const entry = (into[stmt.name.split(':')[0]!] ??= { n: 0, ms: 0, engineMs: 0 })
          entry.n += 1
          entry.ms += performance.now() - t0
          entry.engineMs += (opts?.stats?.dbMs ?? 0) - db0
        }
      }
    }
  return {
    runner: { ...runner, rows: timed(runner.rows.bind(runner)) as QueryRunner['rows'], command: timed(runner.command.bind(runner)) as QueryRunner['command'] },
    start: () => void (tally = {}),
    stop: () => {
      const done = tally ?? {}
      tally = undefined
      return done
    },
  }
}
