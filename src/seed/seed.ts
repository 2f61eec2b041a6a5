import { readFileSync } from 'node:fs'
import type { QueryRunner } from '../clickhouse/run.ts'

const SQL_DIR = new URL('../../sql/seed/', import.meta.url)

/** One project's synthetic traffic: how many events over how many days before `end`, from which seed. */
export interface SeedRequest {
  projectId: string
  events: number
  days: number
  seed: number
  end: Date
}
const read = (file: string) => readFileSync(new URL(file, SQL_DIR), 'utf8')

const SESSIONS_SQL = read('sessions.sql')
const EVENTS_SQL = read('events.sql').replace('/*sessions*/', SESSIONS_SQL)
const PROFILES_SQL = read('profiles.sql')
const EVENT_META_SQL = read('event_meta.sql')
const GROUPS_SQL = read('groups.sql')

/** Sessions per planning group: the plan knows each group's event count, so inserts are whole groups. */
const GROUP_SESSIONS = 1024
/**
 * Events per insert. Each insert becomes two blocks of half this size (sql/seed/events.sql), one
 * per core, each reaching the sessions view with whole sessions. Fewer, larger parts leave less for
 * background merges to compete with; smaller inserts would only make the progress finer.
 */
const CHUNK_EVENTS = 500_000
/** Size of the device pool relative to the events: about two sessions per device, so visitors return. */
const EVENTS_PER_DEVICE = 7

export class AlreadySeededError extends Error {
  constructor(req: SeedRequest) {
    super(`project ${req.projectId} already holds the events of seed ${req.seed}; choose another --seed or another project`)
  }
}

interface Chunk {
  firstSession: number
  sessions: number
  /** Events of this chunk to insert: all of them, except in a last chunk that cuts its last session. */
  events: number
  cut: boolean
}

interface Group {
  g: number
  /** Sessions in the group (the last group of the plan may be short). */
  sessions: number
  events: number
}

/** Whole groups of sessions, gathered into inserts of about CHUNK_EVENTS until `total` events are covered. */
function planChunks(groups: Group[], total: number): Chunk[] {
  const chunks: Chunk[] = []
  let planned = 0
  let current: Chunk | undefined
  for (const group of groups) {
    if (planned >= total) break
    current ??= { firstSession: group.g * GROUP_SESSIONS, sessions: 0, events: 0, cut: false }
    current.sessions += group.sessions
    const take = Math.min(group.events, total - planned)
    current.events += take
    current.cut = take < group.events
    planned += take
    if (current.events >= CHUNK_EVENTS || planned >= total) {
      chunks.push(current)
      current = undefined
    }
  }
  return chunks
}

/**
 * Generates `req.events` events of synthetic traffic for one project inside ClickHouse, plus the
 * profiles of its signed-in users, the groups they belong to and the display settings of its custom events. Every row is a
 * function of the request, so the same request always yields the same rows.
 */
export async function seedProject(
  runner: QueryRunner,
  req: SeedRequest,
  onProgress?: (done: number, total: number) => void,
): Promise<{ events: number }> {
  const params = {
    project: req.projectId,
    seed: req.seed,
    end_ms: req.end.getTime(),
    days: req.days,
    devices: Math.max(1, Math.ceil(req.events / EVENTS_PER_DEVICE)),
  }
  const [existing] = await runner.rows<{ n: number }>(
    {
      name: 'seed_existing',
      sql: `SELECT count() AS n FROM events
            WHERE project_id = {project:String} AND session_id IN (SELECT session_id FROM (${SESSIONS_SQL}))`,
      params: { ...params, first: 0, count: 1 },
    },
    { timeoutS: 60 },
  )
  if (existing && existing.n > 0) throw new AlreadySeededError(req)

  // Every session has at least one event, so `events` sessions always suffice.
  const groups = await runner.rows<Group>(
    {
      name: 'seed_plan',
      sql: `SELECT intDiv(s, {group:UInt64}) AS g, count() AS sessions, sum(size) AS events
            FROM (${SESSIONS_SQL}) GROUP BY g ORDER BY g`,
      params: { ...params, first: 0, count: req.events, group: GROUP_SESSIONS },
    },
    { timeoutS: 60 },
  )
  let done = 0
  onProgress?.(done, req.events)
  for (const chunk of planChunks(groups, req.events)) {
    await runner.command({
      name: 'seed_events',
      // The cut keeps the first events in (session, event) order, so it is as deterministic as the rest.
      sql: chunk.cut ? `${EVENTS_SQL}\nORDER BY s, j\nLIMIT {limit:UInt64}` : EVENTS_SQL,
      params: { ...params, first: chunk.firstSession, count: chunk.sessions, limit: chunk.events },
    })
    done += chunk.events
    onProgress?.(done, req.events)
  }
  await runner.command({ name: 'seed_profiles', sql: PROFILES_SQL, params: { project: req.projectId } })
  await runner.command({ name: 'seed_event_meta', sql: EVENT_META_SQL, params: { project: req.projectId, end_ms: params.end_ms } })
  await runner.command({ name: 'seed_groups', sql: GROUPS_SQL, params: { project: req.projectId, end_ms: params.end_ms } })
  return { events: done }
}
