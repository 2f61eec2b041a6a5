import { createClient } from '@clickhouse/client'
import { Session } from 'chdb'
import { createChdbConnection } from 'chdb/connection'
import { mkdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { openBackgroundLane } from './background.ts'
import { openReadLanes } from './read-lanes.ts'
import { DataDirectoryLockedError } from './errors.ts'
import type { Engine, EngineConfig } from './index.ts'
import { killEmbedded } from './embedded-kill.ts'
import { QUERY_ID } from './kill.ts'

/**
 * Whether another live process runs ClickHouse on `dir`. chDB reports a held lock only as a generic
 * connection failure (the reason goes to the native stderr), so the status file, which ClickHouse
 * writes with its PID while it runs and removes on a clean exit, is asked first.
 */
function lockedByAnotherProcess(dir: string): boolean {
  let status: string
  try {
    status = readFileSync(join(dir, 'status'), 'utf8')
  } catch {
    return false
  }
  const pid = Number(/^PID: (\d+)$/m.exec(status)?.[1])
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: alive, but another user's; ESRCH: a stale file left by a crash, which chDB takes over.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export async function openEmbeddedEngine(config: EngineConfig): Promise<Engine> {
  const dir = resolve(config.QUARRY_DATA_DIR)
  const database = config.CLICKHOUSE_DATABASE
  mkdirSync(dir, { recursive: true })
  if (lockedByAnotherProcess(dir)) throw new DataDirectoryLockedError(dir)
  let connection: ReturnType<typeof createChdbConnection>
  try {
    connection = createChdbConnection({ path: dir })
  } catch (err) {
    if (/Cannot lock file/.test(String((err as Error).message))) throw new DataDirectoryLockedError(dir)
    throw err
  }
  // chdb declares the Connection contract from its own copy of @clickhouse/client-common;
  // the shapes are the same, only the declaration files differ.
  const client = createClient({ connection } as unknown as Parameters<typeof createClient>[0])
  // The connection's own database, for commands and imports; the read and background sessions select theirs.
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` })
  await client.command({ query: `USE ${database}` })
  // Builds beside requests, not ahead of them; snapshots at the requests' priority (background.ts).
  const background = { build: openBackgroundLane(dir, database, 19), snapshot: openBackgroundLane(dir, database, 0) }
  const lanes = openReadLanes(dir, database, config.QUARRY_READ_LANES)
  return {
    mode: 'embedded',
    reportsReads: false,
    database,
    client,
    background,
    read: (req) => lanes.read(req),
    async *streamRaw(req) {
      // The connection's query() buffers whole results; exports go through chDB's native streaming.
      // Each stream needs a session of its own (one active stream per session).
      const session = new Session(dir)
      await session.queryAsync(`USE ${database}`)
      const stream = session.queryStreamBind(req.sql, req.params, { signal: req.signal })
      // chDB looks at the signal only when asked for the next block; a consumer that is gone may
      // never ask again (a client that left before the response started), so an abort also
      // cancels the stream and closes its session here and now (both wait for a fetch in flight).
      const onAbort = () => {
        stream.cancel()
        session.close()
      }
      req.signal?.addEventListener('abort', onAbort, { once: true })
      try {
        for await (const chunk of stream) yield chunk.raw()
      } finally {
        req.signal?.removeEventListener('abort', onAbort)
        stream.cancel()
        session.close()
      }
    },
    // chDB has no query ids of ours, but every read carries its id as log_comment (see finalSql), and
    // KILL QUERY from another session stops it; the shared connection runs one query at a time and
    // is busy with the very query to stop. Without a kill, max_execution_time would bound it.
    async kill(queryId) {
      if (QUERY_ID.test(queryId)) await killEmbedded(dir, queryId)
    },
    async close() {
      await Promise.all([background.build.close(), background.snapshot.close(), lanes.close()])
      await client.close()
    },
  }
}
