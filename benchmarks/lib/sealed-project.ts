import { randomInt, randomUUID } from 'node:crypto'
import { DateTime } from 'luxon'
import pino from 'pino'
import { loadConfig } from '../../src/config.ts'
import { newestClosing, readSealedLatest, sealedLatestStatement, type SealedBuild } from '../../src/query/sealed.ts'
import { sealedLiveEventsWriteStatement, sealedLiveWriteStatement } from '../../src/query/sealed-live.ts'
import { sealedLivePagesWriteStatement } from '../../src/query/sealed-pages.ts'
import type { QueryRunner } from '../../src/clickhouse/run.ts'
import { openRuntime, type Runtime } from '../../src/runtime.ts'
import { sealProject } from '../../src/services/sealed/builder.ts'
import { SealedHistory, type SealedHistoryOptions } from '../../src/services/sealed/index.ts'
import { buildApp } from '../../src/app.ts'
import { createClientRow } from '../../src/auth/clients.ts'
import { dataClock } from './data-clock.ts'

export interface SealedProject {
  rt: Runtime
  /** Half an hour past the project's last event, so the live part holds the hour or so after C, as under traffic. */
  clock: DateTime
  /** The newest build, the live sessions computed by each statement. */
  computed: SealedBuild
  /** The same build with its live sessions (and the events after C) written, as requests read them once the planner wrote them. */
  written: SealedBuild
}

/**
 * Opens a seeded data directory for the sealed-history experiments (no background work) and seals
 * the project first (a full build, timed on stdout), unless `reuse` and it has a build.
 */
export async function openSealedProject(dir: string, project: string, reuse: boolean): Promise<SealedProject> {
  const logger = pino({ level: 'warn' })
  const rt = await openRuntime(loadConfig({ ...process.env, QUARRY_DATA_DIR: dir, QUARRY_SEALED: '0' }), logger)
  const read = { timeoutS: 600 }
  const { clock } = await dataClock(rt.runner, project)
  const latest = () => rt.runner.rows<Parameters<typeof readSealedLatest>[0] & object>(sealedLatestStatement([project]), read)
  let [row] = await latest()
  if (!row || !reuse) {
    const started = performance.now()
    await sealProject(project, { runner: rt.runner, logger, closedAt: newestClosing(clock), timeoutS: 900 })
    console.log(`sealed ${project} in ${Math.round(performance.now() - started)} ms`)
    ;[row] = await latest()
  }
  const computed = readSealedLatest(row)!.build
  // Under a stamp of this run's own: a reused build may hold the rows of an earlier run's stamp.
  const stamp = randomInt(1, 2 ** 48)
  await rt.runner.command(sealedLiveWriteStatement(project, computed, stamp))
  await rt.runner.command(sealedLiveEventsWriteStatement(project, computed, stamp))
  await rt.runner.command(sealedLivePagesWriteStatement(project, computed, stamp))
  return { rt, clock, computed, written: { ...computed, liveStamp: stamp, eventsStamp: stamp, pagesStamp: stamp } }
}

/**
 * The app over an opened sealed project, as a server on its clock runs it (the sealed history, no
 * response cache, no metrics), with a root client's headers: for experiments that drive requests in
 * process with app.request().
 */
export async function sealedProjectApp(dir: string, project: string, clientName: string, sealedOptions: Partial<SealedHistoryOptions> = {}) {
  const opened = await openSealedProject(dir, project, true)
  const client = await createClientRow(opened.rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: clientName })
  const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
  return { ...opened, ...sealedApp(opened, sealedOptions), headers }
}

/** One more app over the opened project, with a sealed history of its own: experiments that compare options over one engine. */
export function sealedApp({ rt, clock }: SealedProject, sealedOptions: Partial<SealedHistoryOptions> = {}) {
  const logger = pino({ level: 'warn' })
  const now = () => clock.toJSDate()
  const sealed = new SealedHistory({ runner: rt.runner, logger, now, queryTimeoutS: 120, rebuildIntervalMs: 3_600_000, ...sealedOptions })
  const config = { ...rt.config, QUARRY_RATE_LIMIT: 1_000_000, QUARRY_QUERY_TIMEOUT_S: 120 }
  const app = buildApp({ config, runner: rt.runner, logger, signingKey: rt.signingKey, now, responseCache: false as const, metrics: false as const, sealed })
  return { app, sealed }
}

/**
 * Inserts a copy of the project's last event under a new id, at its instant: C and the data's clock
 * stay, and the events after C change, as a small insert under traffic changes them.
 */
export const insertCopyOfLastEvent = (runner: QueryRunner, project: string): Promise<void> =>
  runner.command({
    name: 'insert_one',
    sql: 'INSERT INTO events SELECT * REPLACE ({id:String} AS id) FROM events WHERE project_id = {p:String} ORDER BY created_at DESC LIMIT 1',
    params: { id: randomUUID(), p: project },
  })
