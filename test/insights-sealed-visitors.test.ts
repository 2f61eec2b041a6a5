/**
 * Breakdowns whose visitors are counted by their last sealed day (sealed_rollup_last) less the live
 * visitors already seen with the value on the window's days (sealed_live_seen): whole UTC days to
 * C, every dimension, the same numbers as the reference model computed from the inserted rows. The
 * fixture's returning visitor after C was seen before C, so a count that added every live visitor,
 * or missed one, differs from the model.
 */
import { describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { SealedHistory } from '../src/services/sealed/index.ts'
import { C, events, get, h, model, U, useSealedSeams } from './fixtures/sealed-seams.ts'
import { queryString, requestAs, type Query } from './fixtures/insights-harness.ts'
import { testApp } from './helpers/runtime.ts'
import { DIMENSION_NAMES, ms, type Window } from './fixtures/insights-model.ts'

useSealedSeams()

const DAY = 86_400_000
const cDay = Math.floor(C / DAY) * DAY
/** Whole UTC days to the end of C's day, starting `days` days before C's day. */
const toC = (days: number): [Query, Window] => {
  const start = cDay - days * DAY
  const end = cDay + DAY
  return [{ startDate: new Date(start).toISOString(), endDate: new Date(end - 1).toISOString() }, { start, end, timezone: 'UTC' }]
}
const explained = async (dimension: string, query: Query) => (await h.get(U, dimension, { ...(query as object), explain: 'sql' })).body.sql.at(-1) as string

describe('breakdown visitors counted by their last day', () => {
  it('the fixture has a live visitor seen before C in the windows below', () => {
    const before = new Set(events.filter((e) => e.project_id === U && ms(e) < C && ms(e) >= cDay - 30 * DAY).map((e) => e.profile_id))
    expect(events.some((e) => e.project_id === U && ms(e) >= C && before.has(e.profile_id))).toBe(true)
  })

  it('are read from the counts once the live visitors are written, and only for whole UTC days to C from C\'s day minus 31', async () => {
    await get(U, 'country', { range: '30d' })
    await h.sealed!.snapshotsWritten(U)
    expect(await explained('country', { range: '30d' })).toContain('FROM sealed_rollup_last')
    expect(await explained('country', toC(31)[0])).toContain('FROM sealed_rollup_last')
    expect(await explained('country', toC(32)[0])).not.toContain('FROM sealed_rollup_last')
    expect(await explained('country', { range: '30d', timezone: 'Asia/Kolkata' })).not.toContain('FROM sealed_rollup_last')
    expect(await explained('country', { range: '30d', filters: [{ name: 'browser', operator: 'is', value: ['Chrome'] }] })).not.toContain('FROM sealed_rollup_last')
  })

  it('are the bitmaps\' union for a build with fewer recent sessions than countedMinSessions, whose seen snapshot is never written', async () => {
    // The sessions that started in the 31 days before C (held ones too), from the rows inserted.
    const starts = new Map<string, number>()
    for (const e of events) if (e.project_id === U && e.session_id !== '') starts.set(e.session_id, Math.min(starts.get(e.session_id) ?? Infinity, ms(e)))
    const recent = [...starts.values()].filter((t) => t < C && t >= C - 31 * DAY).length
    expect(recent).toBeGreaterThan(0)
    const writes: string[] = []
    const runner = { ...h.rt.runner, command: (stmt: Parameters<typeof h.rt.runner.command>[0], opts?: Parameters<typeof h.rt.runner.command>[1]) => (writes.push(stmt.name), h.rt.runner.command(stmt, opts)) }
    const sealed = new SealedHistory({ runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 3_600_000, insertsTtlMs: 0, countedMinSessions: recent + 1 })
    const app = testApp(h.rt, { now: () => h.clock.now, sealed, runner })
    const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root-small' })
    const ask = (dimension: string, query: object) => requestAs(app, `http://quarry.test/insights/${U}/${dimension}?${queryString(query as Query)}`, root)
    await ask('country', { range: '30d' })
    await sealed.snapshotsWritten(U)
    expect(writes).not.toContain('sealed_live_seen_write')
    const explainedSql = (await ask('country', { range: '30d', explain: 'sql' })).body.sql.at(-1) as string
    expect(explainedSql).not.toContain('FROM sealed_rollup_last')
    expect(explainedSql).toContain('groupBitmapMerge')
    const [query, w] = toC(13)
    const data = model()
    for (const dimension of DIMENSION_NAMES) {
      const res = await ask(dimension, { ...(query as object), limit: 1000 })
      expect(res.headers.get('x-quarry-sealed-until'), dimension).not.toBeNull()
      expect(res.body, dimension).toEqual(data.breakdown(U, dimension, w, []))
    }
    // At exactly that many, they are counted.
    const counted = new SealedHistory({ runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 3_600_000, insertsTtlMs: 0, countedMinSessions: recent })
    const countedApp = testApp(h.rt, { now: () => h.clock.now, sealed: counted, runner })
    await requestAs(countedApp, `http://quarry.test/insights/${U}/country?range=30d`, root)
    await counted.snapshotsWritten(U)
    expect(writes).toContain('sealed_live_seen_write')
    expect(((await requestAs(countedApp, `http://quarry.test/insights/${U}/country?range=30d&explain=sql`, root)).body.sql.at(-1) as string)).toContain('FROM sealed_rollup_last')
  })

  for (const days of [0, 1, 6, 13, 30, 31, 40]) {
    it(`every dimension over ${days + 1} whole UTC days to C`, async () => {
      const [query, w] = toC(days)
      await get(U, 'country', query)
      await h.sealed!.snapshotsWritten(U)
      const data = model()
      for (const dimension of DIMENSION_NAMES) {
        const res = await get(U, dimension, { ...(query as object), limit: 1000 })
        expect(res.sealedUntil, dimension).toBe(C)
        expect(res.body, dimension).toEqual(data.breakdown(U, dimension, w, []))
      }
    })
  }
})
