import { createHmac, timingSafeEqual } from 'node:crypto'

/** An opaque token: the payload in base64url and its HMAC-SHA256, so clients cannot forge or edit it. */
export function signToken(payload: unknown, key: Buffer): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url')
  const mac = createHmac('sha256', key).update(body).digest('base64url')
  return `${body}.${mac}`
}

/** The payload, or undefined when the token was not signed with this key or is malformed. */
export function verifyToken(token: string, key: Buffer): unknown {
  const dot = token.indexOf('.')
  if (dot <= 0 || token.length > 4096) return undefined
  const body = token.slice(0, dot)
  const mac = Buffer.from(token.slice(dot + 1), 'base64url')
  const expected = createHmac('sha256', key).update(body).digest()
  if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return undefined
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
}
