import type { RunOptions, Statement } from '../../clickhouse/run.ts'
import type { SealedBuild } from '../../query/sealed.ts'
import { PostingsChoice, testedAsList } from '../../query/sealed-postings.ts'
import { requestOptions, SharedReads, type RequestRun } from '../planning-reads.ts'

/** Sets remembered per build, past which a project's are forgotten (a dashboard asks a handful). */
const MAX_SETS = 1_000

/**
 * Which postings sets of each project's newest build are small (src/query/sealed-postings.ts),
 * learned as requests test them: the first request to test a set reads its size, in one statement
 * for all the sets it tests, and the ones after it use what it found. A request that only explains
 * itself lists that read and tests every set with its bitmap.
 */
export class PostingsSizes {
  private readonly known = new Map<string, { version: number; small: Map<string, boolean> }>()
  private readonly shared = new SharedReads()

  /** `render`'s statement, given what is known of the sets it tests once their sizes are. */
  async statement(projectId: string, build: SealedBuild, run: RequestRun, render: (postings: PostingsChoice) => Statement): Promise<Statement> {
    let known = this.known.get(projectId)
    if (known?.version !== build.version || known.small.size > MAX_SETS) {
      known = { version: build.version, small: new Map() }
      if (!run.runner.dryRun) this.known.set(projectId, known)
    }
    const choice = new PostingsChoice(known.small)
    const statement = render(choice)
    const sizes = choice.sizes(statement.params)
    if (!sizes) return statement
    const read = (own: RunOptions) => run.runner.rows<{ set: number; posted: number; sealed: number }>(sizes.statement, own)
    // A dashboard opened with a filter asks its sets in a burst of requests: one read for them all.
    const rows = run.runner.dryRun ? await read(requestOptions(run)) : await this.shared.run(`${projectId}:${build.version}:${sizes.keys.join('\n')}`, run, read)
    if (rows.length === 0) return statement
    for (const row of rows) known.small.set(sizes.keys[row.set]!, testedAsList(row.posted, row.sealed))
    return render(new PostingsChoice(known.small))
  }
}
