import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'

const KEY_LENGTH = 32

function scryptAsync(secret: string, salt: string): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, KEY_LENGTH, (err, key) => (err ? reject(err) : resolve(key))),
  )
}

/** A new client secret: `sec_` and 24 random bytes in hex. */
export const generateSecret = (): string => `sec_${randomBytes(24).toString('hex')}`

/**
 * OpenPanel's stored format, `<salt>.<hex key>`: the salt is 32 hex characters used as a string,
 * with Node's scrypt defaults, so client rows migrated from OpenPanel verify unchanged.
 */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16).toString('hex')
  const key = await scryptAsync(secret, salt)
  return `${salt}.${key.toString('hex')}`
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [salt, keyHex] = stored.split('.')
  if (!salt || !keyHex || !/^[0-9a-f]+$/i.test(keyHex)) return false
  const expected = Buffer.from(keyHex, 'hex')
  const actual = await scryptAsync(secret, salt)
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}
