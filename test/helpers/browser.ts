/** Debian's chromium through playwright-core, as the browser tests and the explorer benchmark drive it. */
import { existsSync } from 'node:fs'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'

export const CHROMIUM = process.env.QUARRY_CHROMIUM ?? '/usr/bin/chromium'
export const hasChromium = existsSync(CHROMIUM)

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

/** What a page did that a test may refuse: console errors, uncaught exceptions, requests leaving the origin. */
export interface Watched {
  page: Page
  context: BrowserContext
  consoleErrors: { text: string; url: string }[]
  external: string[]
  requests: string[]
}

/** A fresh context (its own sessionStorage) whose requests to any other origin are recorded and refused. */
export async function watchedPage(browser: Browser, base: string, options: Parameters<Browser['newContext']>[0] = {}): Promise<Watched> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true, ...options })
  const page = await context.newPage()
  const watched: Watched = { page, context, consoleErrors: [], external: [], requests: [] }
  page.on('console', (msg) => {
    if (msg.type() === 'error') watched.consoleErrors.push({ text: msg.text(), url: msg.location().url })
  })
  page.on('pageerror', (err) => watched.consoleErrors.push({ text: `uncaught: ${err.message}`, url: '' }))
  page.on('request', (req) => {
    watched.requests.push(req.url())
    const url = req.url()
    if (!url.startsWith(base) && !url.startsWith('data:') && !url.startsWith('blob:')) watched.external.push(url)
  })
  await page.route((url) => !url.href.startsWith(base) && url.protocol.startsWith('http'), (route) => route.abort())
  return watched
}
