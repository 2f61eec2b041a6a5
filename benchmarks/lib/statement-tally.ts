import type { QueryRunner, Statement } from '../../src/clickhouse/run.ts'

/** Statements by name (a route's dimension after `:` left off): how many ran, and their wall ms. */
export type Tally = Record<string, { n: number; ms: number }>

/**
 * A runner that counts the statements sent through it while counting is on: the profile of a load
 * phase (which statements its requests cost, planning reads and snapshot writes included).
 */
export function tallyStatements(runner: QueryRunner): { runner: QueryRunner; start(): void; stop(): Tally } {
  let tally: Tally | undefined
  const timed =
    <A extends unknown[], R>(send: (stmt: Statement, ...rest: A) => Promise<R>) =>
    async (stmt: Statement, ...rest: A): Promise<R> => {
      const into = tally
      const t0 = performance.now()
      try {
        return await send(stmt, ...rest)
      } finally {
        if (into) {
          const entry = (into[stmt.name.split(':')[0]!] ??= { n: 0, ms: 0 })
          entry.n += 1
          entry.ms += performance.now() - t0
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
