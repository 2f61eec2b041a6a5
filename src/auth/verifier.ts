import { hash, randomBytes } from 'node:crypto'
import type { QueryRunner } from '../clickhouse/run.ts'
import { SingleFlight } from '../single-flight.ts'
import { TtlCache } from './cache.ts'
import { findClient, type ClientType } from './clients.ts'
import { isClientId, type Credentials } from './credentials.ts'

export interface VerifiedClient {
  id: string
  type: ClientType
  projectId: string | null
  organizationId: string
}

/** Why credentials were refused: for the log only, the caller always gets the same answer. */
export type FailureReason = 'missing' | 'malformed_id' | 'unknown_client' | 'revoked' | 'wrong_secret'

export type Verification = { ok: true; client: VerifiedClient } | { ok: false; reason: FailureReason }

export interface VerifierOptions {
  runner: QueryRunner
  ttlMs: number
  clock: () => number
  verifySecret: (secret: string, stored: string) => Promise<boolean>
}

interface Verified {
  client: VerifiedClient
  /** The stored hash the secret matched: while the row still has it, the secret still matches. */
  secretHash: string
}

// Checking a secret against this when no usable row exists costs one scrypt, like a real check,
// so the response time does not tell whether a client id exists. It matches no secret.
const DUMMY_HASH = `${randomBytes(16).toString('hex')}.${randomBytes(32).toString('hex')}`

// One-shot: a hash object per request was a measurable part of a cache hit's CPU.
const sha256 = (text: string) => hash('sha256', text, 'hex')

export interface Verifier {
  /**
   * `onFlight` runs only when this call starts a verification of its own (not for a cache hit, nor
   * for a call joining one in flight); it may refuse by throwing, and the function it returns runs
   * when that verification ends.
   */
  verify(credentials: Credentials, onFlight?: () => () => void): Promise<Verification>
}

/**
 * scrypt is slow on purpose, so a success is kept for `ttlMs`, keyed by the client id and a hash of
 * the presented secret, and identical concurrent credentials share one verification. Failures are
 * never kept. When an entry expires the row is read again, so revocation takes effect within the
 * TTL; if the row still carries the hash the secret matched, that read is all the renewal costs.
 */
export function createVerifier(opts: VerifierOptions): Verifier {
  const cache = new TtlCache<Verified>(opts.ttlMs, opts.clock)
  const flights = new SingleFlight<Verification>()

  async function check(id: string, secret: string, key: string): Promise<Verification> {
    const previous = cache.stale(key)
    const row = await findClient(opts.runner, id)
    const usable = row !== undefined && row.revoked_at === null
    const matches =
      usable && previous?.secretHash === row.secret_hash
        ? true
        : await opts.verifySecret(secret, usable ? row.secret_hash : DUMMY_HASH)
    if (!usable || !matches) {
      cache.delete(key)
      return { ok: false, reason: row === undefined ? 'unknown_client' : !usable ? 'revoked' : 'wrong_secret' }
    }
    const client: VerifiedClient = {
      id: row.id,
      type: row.type,
      projectId: row.project_id,
      organizationId: row.organization_id,
    }
    cache.set(key, { client, secretHash: row.secret_hash })
    return { ok: true, client }
  }

  return {
    async verify(credentials, onFlight) {
      if (!isClientId(credentials.id)) return { ok: false, reason: 'malformed_id' }
      const id = credentials.id.toLowerCase()
      const key = `${id}:${sha256(credentials.secret)}`
      const fresh = cache.get(key)
      if (fresh) return { ok: true, client: fresh.client }
      return flights.run(key, () => {
        const release = onFlight?.()
        return check(id, credentials.secret, key).finally(release)
      })
    },
  }
}
