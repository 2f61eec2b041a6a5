/**
 * /docs renders the API reference in a real headless browser (Debian's chromium through
 * playwright-core) against a real listening server, from the bundle Quarry serves itself.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.ts'
import { createLogger } from '../src/log.ts'
import { listen, type RunningServer } from '../src/server.ts'
import { testConfig } from './helpers/runtime.ts'
import { idleRunner } from './openapi-support.ts'

const CHROMIUM = process.env.QUARRY_CHROMIUM ?? '/usr/bin/chromium'
const hasChromium = existsSync(CHROMIUM)
if (!hasChromium) console.log(`docs-browser: skipped, ${CHROMIUM} is absent (apt-get install chromium)`)

let server: RunningServer | undefined
let browser: Browser | undefined
const dir = mkdtempSync(join(tmpdir(), 'quarry-docs-'))
// Kept for a person to look at: QUARRY_DOCS_SCREENSHOT=/some/path.png
const SCREENSHOT = process.env.QUARRY_DOCS_SCREENSHOT ?? join(dir, 'docs.png')

beforeAll(async () => {
  if (!hasChromium) return
  // /docs and /openapi.json need no engine.
  const app = buildApp({ config: testConfig(), runner: idleRunner, logger: createLogger('silent'), signingKey: Buffer.alloc(32) })
  server = await listen(app, '127.0.0.1', 0)
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
})

afterAll(async () => {
  await browser?.close()
  await server?.shutdown(1000)
  if (!process.env.QUARRY_DOCS_SCREENSHOT) rmSync(dir, { recursive: true, force: true })
})

describe('/docs in a headless browser', () => {
  it.skipIf(!hasChromium)('renders the reference of every route from the served document', { timeout: 90_000 }, async () => {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } })
    const failed: string[] = []
    const external: string[] = []
    const base = `http://127.0.0.1:${server!.port}`
    page.on('requestfailed', (req) => failed.push(req.url()))
    const requested: string[] = []
    page.on('request', (req) => {
      requested.push(req.url())
      if (!req.url().startsWith(base) && !req.url().startsWith('data:') && !req.url().startsWith('blob:')) external.push(req.url())
    })
    // Works offline: nothing may come from outside the server.
    await page.route((url) => !url.href.startsWith(base) && url.protocol.startsWith('http'), (route) => route.abort())

    const res = await page.goto(`${base}/docs`, { waitUntil: 'domcontentloaded' })
    expect(res?.status()).toBe(200)
    await page.getByText('Top pages by sessions').first().waitFor({ state: 'attached', timeout: 60_000 })
    await page.getByText('Quarry').first().waitFor({ timeout: 10_000 })
    const text = await page.locator('body').innerText()
    for (const summary of ['Top pages by sessions', 'Distinct visitors with any event in the last 5 minutes', 'Sessions by country (iso 3166-1 alpha-2)']) {
      expect(text).toContain(summary)
    }
    // The export and system tags, the error codes of the description, and the try-it panel's credentials.
    expect(text).toMatch(/\bexport\b/)
    expect(text).toMatch(/\bsystem\b/)
    expect(text).toContain('openpanel-client-id')
    expect(text).toMatch(/invalid_parameters/)
    expect(failed.filter((url) => url.startsWith(base))).toEqual([])
    // Not a font, script or style from another origin: every request stayed on the server.
    await page.waitForLoadState('networkidle')
    expect(external).toEqual([])
    expect(requested.some((url) => url === `${base}/docs/scalar.js`)).toBe(true)
    expect(requested.some((url) => url === `${base}/openapi.json`)).toBe(true)

    await page.screenshot({ path: SCREENSHOT })
    const png = readFileSync(SCREENSHOT)
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    // IHDR: width and height of the viewport; a blank page compresses to a few KB.
    expect(png.readUInt32BE(16)).toBe(1280)
    expect(png.readUInt32BE(20)).toBe(900)
    expect(statSync(SCREENSHOT).size).toBeGreaterThan(30_000)
    await page.close()
  })
})
