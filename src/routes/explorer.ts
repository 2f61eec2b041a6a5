import { Hono, type Context } from 'hono'
import type { AppEnv } from '../app-env.ts'
import { EXPORT_FORMAT_NAMES } from '../query/export-formats.ts'
import { RANGES } from '../query/time-range.ts'
import { buildExplorer, type Asset, type ExplorerAssets } from '../web/assets.ts'
import { ApiError } from '../http/errors.ts'

/**
 * The page may load only what this origin serves and talk only to this origin; nothing inline
 * runs, so an injected string cannot become a script.
 */
export const EXPLORER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

let built: Promise<ExplorerAssets> | undefined

/** Built once per process, on the first request or when `quarry serve` starts. */
export function explorerAssets(): Promise<ExplorerAssets> {
  built ??= buildExplorer({ ranges: RANGES, exportFormats: EXPORT_FORMAT_NAMES }).catch((err) => {
    built = undefined
    throw err
  })
  return built
}

/** The assets for a request: a page that cannot be built is the server's state, said in words, not a 500. */
async function assetsFor(): Promise<ExplorerAssets> {
  try {
    return await explorerAssets()
  } catch (err) {
    throw new ApiError(503, 'explorer_unavailable', `the explorer page could not be built: ${(err as Error).message.split('\n')[0]}`)
  }
}

function send(c: Context<AppEnv>, asset: Asset, cacheControl: string) {
  const headers = {
    'Content-Type': asset.contentType,
    'Cache-Control': cacheControl,
    ETag: asset.etag,
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': EXPLORER_CSP,
    'Referrer-Policy': 'no-referrer',
  }
  const seen = c.req.header('If-None-Match')?.split(',').map((tag) => tag.trim().replace(/^W\//, ''))
  if (seen?.includes(asset.etag)) return c.body(null, 304, headers)
  return c.body(asset.body, 200, { ...headers, 'Content-Length': String(asset.body.byteLength) })
}

/** GET / (the explorer page: revalidated every time) and its assets (hashed names, cached for good). */
export function explorerRoutes() {
  return new Hono<AppEnv>()
    .get('/', async (c) => send(c, (await assetsFor()).page, 'no-cache'))
    .get('/assets/:name', async (c) => {
      const asset = (await assetsFor()).files.get(c.req.param('name'))
      if (!asset) throw new ApiError(404, 'not_found', `no asset ${c.req.param('name')}`)
      return send(c, asset, 'public, max-age=31536000, immutable')
    })
}
