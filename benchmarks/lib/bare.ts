import type { Runtime } from '../../src/runtime.ts'
import type { PeerStatement } from './peer.ts'

/**
 * Milliseconds to run a route's statements as the route does (in parallel), in process, straight
 * on the engine's client: no gate, no HTTP, no parsing of the rows.
 */
export async function runBare(rt: Runtime, statements: readonly PeerStatement[]): Promise<number> {
  const started = performance.now()
  await Promise.all(
    statements.map(async (s) => {
      const result = await rt.engine.client.exec({ query: s.sql, query_params: s.params })
      for await (const _ of result.stream) {
        // drained
      }
    }),
  )
  return performance.now() - started
}
