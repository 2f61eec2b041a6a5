import { Session } from 'chdb'
import { KILL_TIMEOUT_MS } from './kill.ts'

/**
 * Stops chDB's statements carrying `comment` as log_comment (one of ours, never a user's value),
 * from a session of its own: the one running them is busy with them. ASYNC: chDB's KILL … SYNC
 * never returned, even once the statement had ended. Apart from kill.ts, which the server engine
 * loads too: an install without chdb must not load it.
 */
export async function killEmbedded(dir: string, comment: string): Promise<void> {
  const session = new Session(dir)
  try {
    await session.queryAsync(`KILL QUERY WHERE Settings['log_comment'] = '${comment}' ASYNC FORMAT Null`, { timeout: KILL_TIMEOUT_MS })
  } finally {
    session.close()
  }
}
