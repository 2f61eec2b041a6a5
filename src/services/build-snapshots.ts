import { randomInt } from 'node:crypto'
import type { QueryRunner, Statement } from '../clickhouse/run.ts'
import { writeInLane } from './build-planner.ts'

/** Keys one build's snapshots may hold per project: each is a write in the background lane, so a client naming zone after zone does not queue writes without end. */
const MAX_KEYS = 32
/** A key whose write failed is tried again after this. */
const RETRY_MS = 60_000
/** A snapshot is written again once this old, before its rows expire (a day). */
const MAX_AGE_MS = 12 * 3_600_000

interface Written {
  /** The stamp once written. */
  stamp?: number
  at: number
  writing?: Promise<void>
}

/**
 * Snapshots of what a build alone gives (active users' series per zone and `days`), written once
 * per build and key. Unlike the snapshots of the events after C (build-planner.ts), an insert after
 * C does not change them, and a build no longer holding is not read at all, so a stamp holds for the
 * build's life. Each is written in the background lane when a request first asks; until then, and
 * on a dry run, requests compute it themselves.
 */
export class BuildSnapshots {
  /** Per project, the newest build asked about and its keys. */
  private readonly projects = new Map<string, { version: number; keys: Map<string, Written> }>()

  constructor(
    private readonly timeoutS: number,
    /** Told of a write that failed (requests compute until one is written). */
    private readonly failed: (err: unknown, projectId: string, key: string) => void = () => {},
  ) {}

  /** The stamp of the build's snapshot under `key`, or undefined, starting its write when none is under way. */
  stamp(projectId: string, version: number, key: string, runner: QueryRunner, write: (stamp: number) => Statement): number | undefined {
    let project = this.projects.get(projectId)
    // A newer build replaces the older's keys; a request still planning with the older computes.
    if (!project || project.version < version) this.projects.set(projectId, (project = { version, keys: new Map() }))
    if (project.version !== version) return undefined
    const keys = project.keys
    const known = keys.get(key)
    if (known?.stamp !== undefined && Date.now() - known.at < MAX_AGE_MS) return known.stamp
    // An aging one is still read while its next is written (its rows last a day).
    const aging = known?.stamp
    const failedLately = known !== undefined && known.stamp === undefined && Date.now() - known.at < RETRY_MS
    if (runner.dryRun || known?.writing || failedLately || (!known && keys.size >= MAX_KEYS)) return aging
    const stamp = randomInt(1, 2 ** 48)
    const statement = write(stamp)
    const writing = writeInLane(runner, statement, this.timeoutS).then(
      () => void keys.set(key, { stamp, at: Date.now() }),
      (err: unknown) => {
        keys.set(key, { at: Date.now() })
        this.failed(err, projectId, key)
      },
    )
    keys.set(key, { ...known, at: known?.at ?? Date.now(), writing })
    return aging
  }

  /** Resolves when the writes under way (for the project, or every project) are done. */
  async written(projectId?: string): Promise<void> {
    const projects = projectId === undefined ? [...this.projects.values()] : [this.projects.get(projectId)].filter((p) => p !== undefined)
    await Promise.all(projects.flatMap((p) => [...p.keys.values()].map((k) => k.writing)))
  }
}
