import { Session } from 'chdb'

/** How long a KILL QUERY may take to be acknowledged (it is asynchronous on the server). */
export const KILL_TIMEOUT_MS = 5000

/** Our query ids are UUIDs; anything else is never spliced into a KILL statement. */
export const QUERY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * Stops chDB's statements carrying `comment` as log_comment (one of ours, never a user's value),
 * from a session of its own: the one running them is busy with them. ASYNC: chDB's KILL … SYNC
 * never returned, even once the statement had ended.
 */
export async function killEmbedded(dir: string, comment: string): Promise<void> {
  const session = new Session(dir)
  try {
    await session.queryAsync(`KILL QUERY WHERE Settings['log_comment'] = '${comment}' ASYNC FORMAT Null`, { timeout: KILL_TIMEOUT_MS })
  } finally {
    session.close()
  }
}
