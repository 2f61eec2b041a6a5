/**
 * Breakdowns whose visitors are counted by their last sealed day (sealed_rollup_last) less the live
 * visitors already seen with the value on the window's days (sealed_live_seen): whole UTC days to
 * C, every dimension, the same numbers as the reference model computed from the inserted rows. The
 * fixture's returning visitor after C was seen before C, so a count that added every live visitor,
 * or missed one, differs from the model.
 */
import { describe, expect, it } from 'vitest'
import { C, events, get, h, model, U, useSealedSeams } from './fixtures/sealed-seams.ts'
import type { Query } from './fixtures/insights-harness.ts'
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
