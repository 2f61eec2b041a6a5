import type { Context } from 'hono'
import type { AppEnv } from '../app-env.ts'
import type { Statement } from '../clickhouse/run.ts'
import { LIVE_AS_OF } from '../http/cache/middleware.ts'
import type { SealedBuild } from '../query/sealed.ts'
import { PostingsChoice } from '../query/sealed-postings.ts'
import { isoWithOffset } from '../query/time-range.ts'
import type { LivePart, SealedHistory } from '../services/sealed/index.ts'

/**
 * The sealed build that answers for the request's project, saying so in X-Quarry-Sealed-Until (in
 * the request's timezone), and in X-Quarry-Live-As-Of when it reads the events after C as they were
 * a moment ago; undefined when there is no sealed history or no build holds. `live`: the parts after
 * C the route reads from snapshots, if any.
 */
export async function sealedBuildFor(c: Context<AppEnv>, sealed: SealedHistory | undefined, timezone: string, ...live: LivePart[]): Promise<SealedBuild | undefined> {
  const build = await sealed?.forRequest(c.get('project').id, { runner: c.get('runner'), signal: c.req.raw.signal, stats: c.get('stats') }, ...live)
  if (build) c.header('X-Quarry-Sealed-Until', isoWithOffset(build.closedAt.setZone(timezone)))
  if (build?.liveAsOf) c.header(LIVE_AS_OF, build.liveAsOf.setZone(timezone).toISO() ?? '')
  return build
}

/** `render`'s statement for the build, once the sizes of the postings sets it tests are known. */
export async function sealedStatementFor(c: Context<AppEnv>, sealed: SealedHistory | undefined, build: SealedBuild, render: (postings: PostingsChoice) => Statement): Promise<Statement> {
  if (!sealed) return render(new PostingsChoice())
  return sealed.statement(c.get('project').id, build, { runner: c.get('runner'), signal: c.req.raw.signal, stats: c.get('stats') }, render)
}
