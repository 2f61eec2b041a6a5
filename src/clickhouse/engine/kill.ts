/** How long a KILL QUERY may take to be acknowledged (it is asynchronous on the server). */
export const KILL_TIMEOUT_MS = 5000

/** Our query ids are UUIDs; anything else is never spliced into a KILL statement. */
export const QUERY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
