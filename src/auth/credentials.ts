/** What a request presents: a client id and its secret, not yet verified. */
export interface Credentials {
  id: string
  secret: string
}

// Case-insensitive, unlike OpenPanel: ClickHouse parses either case into the same UUID.
const CLIENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const isClientId = (id: string): boolean => CLIENT_ID.test(id)

const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i

/**
 * OpenPanel's two headers, else `Authorization: Basic base64(id:secret)`. A missing secret header
 * reads as '' (as in OpenPanel), which then fails like any wrong secret.
 */
export function readCredentials(header: (name: string) => string | undefined): Credentials | undefined {
  const id = header('openpanel-client-id')
  if (id !== undefined) return { id, secret: header('openpanel-client-secret') ?? '' }
  const encoded = header('authorization')?.match(BASIC)?.[1]
  if (encoded === undefined) return undefined
  const decoded = Buffer.from(encoded, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  return { id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) }
}
