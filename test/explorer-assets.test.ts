/**
 * GET / and its assets without a browser: the page names hashed assets that are cached for good,
 * the page itself is revalidated by ETag, and every response forbids other origins (CSP).
 */
import { describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.ts'
import { createLogger } from '../src/log.ts'
import { testConfig } from './helpers/runtime.ts'
import { idleRunner } from './openapi-support.ts'

const app = buildApp({ config: testConfig(), runner: idleRunner, logger: createLogger('silent'), signingKey: Buffer.alloc(32) })

describe('the explorer page and its assets', () => {
  it('serves the page with an ETag, answers 304 to it, and names its assets by their hash', async () => {
    const res = await app.request('/')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('no-cache')
    const csp = res.headers.get('content-security-policy')!
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).not.toMatch(/unsafe|https?:|\*/)
    const html = await res.text()
    // Nothing inline runs and nothing comes from elsewhere.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//)
    const etag = res.headers.get('etag')!
    const again = await app.request('/', { headers: { 'If-None-Match': etag } })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe('')

    const assets = [...html.matchAll(/(?:src|href)="\/assets\/(app\.[\w-]{16}\.(js|css))"/g)].map((m) => m[1]!)
    expect(assets.map((a) => a.split('.').pop()).sort()).toEqual(['css', 'js'])
    for (const name of assets) {
      const asset = await app.request(`/assets/${name}`, { headers: { 'Accept-Encoding': 'gzip' } })
      expect(asset.status, name).toBe(200)
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      expect(asset.headers.get('content-type')).toMatch(name.endsWith('.js') ? /^text\/javascript/ : /^text\/css/)
      // The name is the ETag, a hash of the bytes (weak once gzip has re-encoded them).
      expect(asset.headers.get('etag')?.replace(/^W\//, '')).toBe(`"${name.split('.')[1]}"`)
      expect((await app.request(`/assets/${name}`, { headers: { 'If-None-Match': asset.headers.get('etag')! } })).status).toBe(304)
      expect(asset.headers.get('content-encoding')).toBe('gzip')
      const bytes = (await asset.arrayBuffer()).byteLength
      expect(bytes, name).toBeLessThan(20_000)
    }
  })

  it('says what the API offers in the page: the ranges and the export formats the server declares', async () => {
    const html = await (await app.request('/')).text()
    expect(html).toMatch(/data-ranges="[^"]*\b30d\b[^"]*"/)
    expect(html).toMatch(/data-export-formats="json,ndjson,csv[^"]*"/)
  })

  it('answers an unknown asset with a 404 in the envelope', async () => {
    const res = await app.request('/assets/app.0000000000000000.js')
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({ code: 'not_found' })
  })
})
