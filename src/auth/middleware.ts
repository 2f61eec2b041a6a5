import { createMiddleware } from 'hono/factory'
import type { Logger } from 'pino'
import type { AppEnv } from '../app-env.ts'
import type { QueryRunner } from '../clickhouse/run.ts'
import type { Config } from '../config.ts'
import { ApiError, toApiError } from '../http/errors.ts'
import { connectionAddress, FailureWindows, rateLimit, RateBuckets, type AddressResolver } from '../http/rate-limit.ts'
import { isClientId, readCredentials } from './credentials.ts'
import { cachedProjectLookup, projectAccess, type ProjectSource } from './project-access.ts'
import type { Metrics } from '../telemetry/metrics.ts'
import { verifySecret } from './secrets.ts'
import { createVerifier, type Verification } from './verifier.ts'

/** Seams for tests: where a request comes from, how a secret is checked, what time it is. */
export interface AuthHooks {
  clientAddress?: AddressResolver
  verifySecret?: (secret: string, stored: string) => Promise<boolean>
  /** Monotonic milliseconds for the caches and limiters. */
  clock?: () => number
}

export interface AuthDeps {
  config: Config
  runner: QueryRunner
  logger: Logger
  auth?: AuthHooks
  /** Where refusals are counted. */
  metrics?: Metrics
}

// One answer for every kind of bad credentials, so a caller cannot tell which part was wrong.
const invalidCredentials = () =>
  new ApiError(401, 'invalid_credentials', 'missing or invalid client credentials (openpanel-client-id and openpanel-client-secret)')

/**
 * The pieces of the /insights and /export guard. They share one verification cache and one set of
 * limits per app, so a client's budget covers both route families.
 */
export function createAuth(deps: AuthDeps) {
  const { config, runner, logger } = deps
  const clock = deps.auth?.clock ?? (() => performance.now())
  const addressOf = deps.auth?.clientAddress ?? connectionAddress(config.QUARRY_TRUST_PROXY_HOPS)
  const windowMs = config.QUARRY_RATE_WINDOW_S * 1000
  const failures = new FailureWindows({ limit: config.QUARRY_AUTH_FAILURE_LIMIT, windowMs, clock })
  const verifier = createVerifier({
    runner,
    ttlMs: config.QUARRY_AUTH_CACHE_TTL_S * 1000,
    clock,
    verifySecret: deps.auth?.verifySecret ?? verifySecret,
  })
  const lookup = cachedProjectLookup(runner, config.QUARRY_PROJECT_CACHE_TTL_S * 1000, clock)

  const refuseIfBlocked = (address: string) => {
    const ms = failures.blockedForMs(address)
    if (ms > 0) {
      deps.metrics?.rateLimitRefusals.inc({ limit: 'address' })
      const retryAfter = String(Math.max(1, Math.ceil(ms / 1000)))
      const message = `too many failed authentications from this address; retry in ${retryAfter} s`
      throw new ApiError(429, 'rate_limited', message, undefined, { 'Retry-After': retryAfter })
    }
  }

  /**
   * The client's row could not be read (an error, a timeout, a cancellation, or an answer cut
   * short): nothing is known about the credentials, so this is neither a refusal nor a failed
   * authentication toward the address's lockout, and nothing is cached; the caller retries.
   */
  const verificationUnavailable = (err: unknown, requestId: string | undefined) => {
    logger.warn({ requestId, err: (err as Error)?.message }, 'authentication could not be checked')
    const mapped = toApiError(err)
    if (mapped.status === 503) return mapped
    return new ApiError(503, 'engine_unavailable', 'the credentials could not be checked now; retry shortly', undefined, { 'Retry-After': '1' })
  }

  /** Verifies the credentials and leaves the client in `c.get('client')`; write clients stop here. */
  const authenticate = createMiddleware<AppEnv>(async (c, next) => {
    const address = addressOf(c)
    refuseIfBlocked(address)
    const credentials = readCredentials((name) => c.req.header(name))
    const result: Verification = credentials
      ? await verifier
          .verify(credentials, () => {
            refuseIfBlocked(address)
            return failures.hold(address)
          })
          .catch((err: unknown) => {
            if (err instanceof ApiError) throw err
            throw verificationUnavailable(err, c.get('requestId'))
          })
      : { ok: false, reason: 'missing' }
    if (!result.ok) {
      failures.fail(address)
      deps.metrics?.authRefusals.inc({ reason: result.reason })
      logger.info(
        {
          requestId: c.get('requestId'),
          address,
          reason: result.reason,
          // Only a well-formed id is logged: a malformed one may be a secret pasted in the wrong header.
          clientId: credentials && isClientId(credentials.id) ? credentials.id : undefined,
        },
        'authentication failed',
      )
      throw invalidCredentials()
    }
    const { client } = result
    if (client.type === 'write') {
      deps.metrics?.authRefusals.inc({ reason: 'write_client' })
      throw new ApiError(403, 'client_type_not_allowed', 'write clients may only send events; use a read or root client')
    }
    c.set('client', { ...client, type: client.type })
    await next()
  })

  return {
    authenticate,
    /** Per client, after authentication: failed attempts are limited per address instead. */
    rateLimit: rateLimit(
      new RateBuckets({ limit: config.QUARRY_RATE_LIMIT, windowMs, clock }),
      (c) => c.get('client').id,
      config.QUARRY_RATE_WINDOW_S,
      () => deps.metrics?.rateLimitRefusals.inc({ limit: 'client' }),
    ),
    projectFrom: (source: ProjectSource) => projectAccess(source, lookup),
  }
}
