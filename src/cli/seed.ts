import { createProject, findProject, PROJECT_ID } from '../projects.ts'
import type { Runtime } from '../runtime.ts'
import { AlreadySeededError, seedProject } from '../seed/seed.ts'
import { CommandError, parse, positiveInteger, UsageError } from './usage.ts'

export interface SeedRequest {
  projectId: string
  events: number
  days: number
  seed: number
  end: Date
}

export function parseSeedArgs(args: string[], now: Date = new Date()): SeedRequest {
  const { values } = parse(args, {
    project: { type: 'string' },
    events: { type: 'string' },
    days: { type: 'string' },
    seed: { type: 'string' },
    end: { type: 'string' },
  })
  if (!values.project) throw new UsageError('seed needs --project')
  if (!PROJECT_ID.test(values.project)) throw new UsageError(`invalid project id "${values.project}"`)
  const end = values.end === undefined ? now : new Date(values.end)
  if (Number.isNaN(end.getTime())) throw new UsageError(`--end must be an ISO 8601 date-time, got "${values.end}"`)
  return {
    projectId: values.project,
    events: positiveInteger('events', values.events, 100_000),
    days: positiveInteger('days', values.days, 30),
    seed: positiveInteger('seed', values.seed, 1),
    end,
  }
}

/** Creates the project when missing, then generates its traffic inside ClickHouse. */
export async function seedWithProject(rt: Runtime, req: SeedRequest, showProgress: boolean): Promise<number> {
  if (!(await findProject(rt.runner, req.projectId))) {
    await createProject(rt.runner, { id: req.projectId, name: req.projectId, timezone: 'UTC', organizationId: 'default' })
  }
  const progress = showProgress
    ? (done: number, total: number) => process.stderr.write(`\rseeding ${req.projectId}: ${Math.round((done / total) * 100)}%`)
    : undefined
  const { events } = await seedProject(rt.runner, req, progress).catch((err: unknown) => {
    throw err instanceof AlreadySeededError ? new CommandError(err.message) : err
  })
  if (showProgress) process.stderr.write('\n')
  return events
}

export async function seedCommand(args: string[], open: () => Promise<Runtime>): Promise<void> {
  const req = parseSeedArgs(args)
  const rt = await open()
  try {
    const started = performance.now()
    const events = await seedWithProject(rt, req, process.stderr.isTTY === true)
    const seconds = (performance.now() - started) / 1000
    process.stdout.write(`${JSON.stringify({ project: req.projectId, events, seconds: Math.round(seconds * 100) / 100 })}\n`)
  } finally {
    await rt.close()
  }
}
