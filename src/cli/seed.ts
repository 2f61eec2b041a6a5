import { createProject, findProject, PROJECT_ID } from '../projects.ts'
import type { Runtime } from '../runtime.ts'
import { PartiallySeededError, PRESETS, seedPreset, type PresetName, type PresetRequest } from '../seed/presets.ts'
import { AlreadySeededError, seedProject, type SeedRequest } from '../seed/seed.ts'
import { CommandError, parse, positiveInteger, UsageError } from './usage.ts'

const SEED_OPTIONS = {
  project: { type: 'string' },
  events: { type: 'string' },
  days: { type: 'string' },
  seed: { type: 'string' },
  end: { type: 'string' },
  preset: { type: 'string' },
} as const

export function parseSeedArgs(args: string[], now: Date = new Date()): SeedRequest {
  const parsed = parseSeedCommand(args, now)
  if ('preset' in parsed) throw new UsageError('--preset seeds many projects; it takes no --project')
  return parsed
}

/** `seed --project …` (one project) or `seed --preset 10m|100m` (the benchmark's 100 projects). */
export function parseSeedCommand(args: string[], now: Date = new Date()): SeedRequest | PresetRequest {
  const { values } = parse(args, SEED_OPTIONS)
  const end = values.end === undefined ? now : new Date(values.end)
  if (Number.isNaN(end.getTime())) throw new UsageError(`--end must be an ISO 8601 date-time, got "${values.end}"`)
  if (values.preset !== undefined) {
    if (!Object.hasOwn(PRESETS, values.preset)) {
      throw new UsageError(`--preset must be one of ${Object.keys(PRESETS).join(', ')}, got "${values.preset}"`)
    }
    for (const option of ['project', 'events', 'days'] as const) {
      if (values[option] !== undefined) throw new UsageError(`--preset fixes the projects, their sizes and days; drop --${option}`)
    }
    return { preset: values.preset as PresetName, seed: positiveInteger('seed', values.seed, 1), end }
  }
  if (!values.project) throw new UsageError('seed needs --project')
  if (!PROJECT_ID.test(values.project)) throw new UsageError(`invalid project id "${values.project}"`)
  return {
    projectId: values.project,
    events: positiveInteger('events', values.events, 100_000),
    days: positiveInteger('days', values.days, 30),
    seed: positiveInteger('seed', values.seed, 1),
    end,
  }
}

/**
 * Seed progress on `out`: redrawn in place on a terminal, else one line per step (a step is an
 * insert of half a million events, so there are few).
 */
export function seedProgress(out: NodeJS.WritableStream & { isTTY?: boolean }, projectId: string) {
  const started = performance.now()
  const tty = out.isTTY === true
  let last = ''
  const line = () => `seeding ${projectId}: ${last} (${((performance.now() - started) / 1000).toFixed(0)} s)`
  // A step takes seconds: on a terminal the clock keeps moving in between.
  const ticking = tty ? setInterval(() => last && out.write(`\r\x1b[K${line()}`), 1000) : undefined
  ticking?.unref()
  return {
    report(done: number, total: number) {
      last = `${done.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} events, ${Math.round((done / total) * 100)}%`
      out.write(tty ? `\r\x1b[K${line()}` : `${line()}\n`)
    },
    end() {
      clearInterval(ticking)
      if (tty) out.write('\n')
    },
  }
}

/** Creates the project when missing, then generates its traffic inside ClickHouse. */
export async function seedWithProject(rt: Runtime, req: SeedRequest, progress?: ReturnType<typeof seedProgress>): Promise<number> {
  await ensureProject(rt, req.projectId)
  const { events } = await seedProject(rt.runner, req, progress && ((done, total) => progress.report(done, total))).catch((err: unknown) => {
    throw err instanceof AlreadySeededError ? new CommandError(err.message) : err
  })
  progress?.end()
  return events
}

async function ensureProject(rt: Runtime, id: string): Promise<void> {
  if (!(await findProject(rt.runner, id))) {
    await createProject(rt.runner, { id, name: id, timezone: 'UTC', organizationId: 'default' })
  }
}

/** Seeds a preset's 100 projects; prints one JSON line like the single-project seed. */
async function seedPresetCommand(rt: Runtime, req: PresetRequest): Promise<void> {
  const started = performance.now()
  const showProgress = process.stderr.isTTY === true
  const result = await seedPreset(rt.runner, req, (id) => ensureProject(rt, id), showProgress
    ? (done, total, project) => process.stderr.write(`\rseeding preset ${req.preset}: ${Math.round((done / total) * 100)}% (${project})`)
    : undefined,
  ).catch((err: unknown) => {
    throw err instanceof PartiallySeededError ? new CommandError(err.message) : err
  })
  if (showProgress) process.stderr.write('\n')
  const seconds = (performance.now() - started) / 1000
  process.stdout.write(`${JSON.stringify({ preset: req.preset, ...result, seconds: Math.round(seconds * 100) / 100 })}\n`)
}

export async function seedCommand(args: string[], open: () => Promise<Runtime>): Promise<void> {
  const req = parseSeedCommand(args)
  const rt = await open()
  try {
    if ('preset' in req) return await seedPresetCommand(rt, req)
    const started = performance.now()
    const events = await seedWithProject(rt, req, process.stderr.isTTY === true ? seedProgress(process.stderr, req.projectId) : undefined)
    const seconds = (performance.now() - started) / 1000
    process.stdout.write(`${JSON.stringify({ project: req.projectId, events, seconds: Math.round(seconds * 100) / 100 })}\n`)
  } finally {
    await rt.close()
  }
}
