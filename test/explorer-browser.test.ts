/**
 * The explorer at / in Debian's chromium (playwright-core) against a real listening server on the
 * Insights fixture: every number on the page is checked against the reference model computed from
 * the inserted rows, and against the API's own answer for the same window.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { listen, type RunningServer } from '../src/server.ts'
import { NOW, PROJECTS } from './fixtures/insights-data.ts'
import { openInsights, requestAs, type Harness } from './fixtures/insights-harness.ts'
import { ms, windowOf, type Filter, type MetricValues, type Window } from './fixtures/insights-model.ts'
import { hasChromium, launchChromium, watchedPage } from './helpers/browser.ts'
import { testApp } from './helpers/runtime.ts'

if (!hasChromium) console.log('explorer-browser: skipped, chromium is absent (apt-get install chromium)')

const U = PROJECTS.utc.id
const W30 = windowOf('2026-03-15T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC')
const W7 = windowOf('2026-04-07T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC')
const before = (w: Window): Window => ({ start: w.start - (w.end - w.start), end: w.start, timezone: w.timezone })
const METRICS = ['unique_visitors', 'total_sessions', 'bounce_rate', 'avg_session_duration', 'views_per_session', 'total_revenue'] as const

let h: Harness
let server: RunningServer | undefined
let limited: RunningServer | undefined
let browser: Browser | undefined
let base = ''
let root: { id: string; secret: string }
let read: { id: string; secret: string }
const dir = mkdtempSync(join(tmpdir(), 'quarry-explorer-'))
const SCREENSHOT = process.env.QUARRY_EXPLORER_SCREENSHOT ?? join(dir, 'explorer.png')

beforeAll(async () => {
  if (!hasChromium) return
  h = await openInsights()
  root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'explorer-root' })
  read = await createClientRow(h.rt.runner, { type: 'read', projectId: U, organizationId: 'org-1', name: 'explorer-read' })
  server = await listen(testApp(h.rt, { now: () => h.clock.now }), '127.0.0.1', 0)
  base = `http://127.0.0.1:${server.port}`
  browser = await launchChromium()
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.shutdown(1000)
  await limited?.shutdown(1000)
  await h?.dispose()
  if (!process.env.QUARRY_EXPLORER_SCREENSHOT) rmSync(dir, { recursive: true, force: true })
})

/** Waits until every widget of a newer view than `after` is drawn; returns that view's number. */
async function complete(page: Page, after = 0): Promise<number> {
  await page.waitForFunction(
    (n) => document.documentElement.dataset.complete === 'true' && Number(document.documentElement.dataset.generation) > n,
    after,
    { timeout: 30_000 },
  )
  return Number(await page.evaluate(() => document.documentElement.dataset.generation))
}

async function tiles(page: Page) {
  return page.$$eval('.tile', (els) =>
    Object.fromEntries(els.map((el) => [el.getAttribute('data-metric'), { value: Number(el.getAttribute('data-value')), previous: Number(el.getAttribute('data-previous')) }])),
  )
}

function expectTiles(shown: Record<string, { value: number; previous: number }>, now: MetricValues, previous: MetricValues) {
  for (const key of METRICS) {
    expect(shown[key]?.value, key).toBe(now[key])
    expect(shown[key]?.previous, `previous ${key}`).toBe(previous[key])
  }
}

/** The names and session counts of the table a widget shows. */
const tableOf = (page: Page, widget: string) =>
  page.$$eval(`[data-widget="${widget}"] tbody tr`, (rows) => rows.map((r) => [r.querySelector('th .name')!.textContent, r.querySelector('td')!.textContent]))

const api = (path: string, as = root) => requestAs({ request: (url: string | URL | Request, init?: RequestInit) => fetch(new URL(String(url), base), init) }, path, as)

describe.skipIf(!hasChromium)('the explorer in a headless browser', () => {
  it('signs in by link, clears the fragment and shows the model\'s numbers, equal to the API\'s', { timeout: 90_000 }, async () => {
    const w = await watchedPage(browser!, base)
    const res = await w.page.goto(`${base}/?project=${U}&range=30d#client=${root.id}:${root.secret}`)
    expect(res?.status()).toBe(200)
    expect(res?.headers()['content-security-policy']).toContain("default-src 'none'")
    await complete(w.page)
    expect(w.page.url()).toBe(`${base}/?project=${U}&range=30d`)
    // A root client picks among its organization's projects (GET /manage/projects).
    await w.page.locator('select#project').waitFor()
    const options = await w.page.$$eval('select#project option', (os) => os.map((o) => (o as HTMLOptionElement).value))
    expect(options.sort()).toEqual(Object.values(PROJECTS).filter((p) => p.organizationId === 'org-1').map((p) => p.id).sort())
    expect(await w.page.$eval('select#project', (s) => (s as HTMLSelectElement).value)).toBe(U)

    const shown = await tiles(w.page)
    expectTiles(shown, h.data.metricValues(U, W30), h.data.metricValues(U, before(W30)))
    const fromApi = await api(`/insights/${U}/metrics?range=30d&previous=true`)
    for (const key of METRICS) expect(shown[key]?.value, key).toBe(fromApi.body.metrics[key])

    // The chart has one point per day of the window, for each of its three lines.
    const points = await w.page.$$eval('[data-widget="chart"] polyline', (ls) => ls.map((l) => l.getAttribute('points')!.split(' ').length))
    expect(points).toEqual([31, 31, 31])
    expect(await w.page.textContent('[data-widget="live"] strong')).toBe(String(h.data.live(U, NOW.getTime())))

    const pages = h.data.pages(U, W30).slice(0, 10)
    expect(await tableOf(w.page, 'pages')).toEqual(pages.map((p) => [p.path || '/', p.sessions.toLocaleString('en')]))
    const referrers = h.data.breakdown(U, 'referrer_name', W30).slice(0, 10)
    expect(await tableOf(w.page, 'group-referrer_name')).toEqual(referrers.map((r) => [r.name ?? '(none)', r.sessions.toLocaleString('en')]))

    // Every widget says what its query cost (Server-Timing), for a hover.
    const costs = await w.page.$$eval('[data-widget] .cost', (els) => els.map((e) => (e as HTMLElement).title))
    expect(costs.length).toBe(8)
    for (const cost of costs) expect(cost).toMatch(/Server-Timing: db;dur=[\d.]+, total;dur=[\d.]+/)

    await w.page.screenshot({ path: SCREENSHOT, fullPage: true })
    const png = readFileSync(SCREENSHOT)
    expect(png.readUInt32BE(16)).toBe(1280)
    expect(statSync(SCREENSHOT).size).toBeGreaterThan(30_000)

    expect(w.consoleErrors).toEqual([])
    expect(w.external).toEqual([])
    expect(w.requests.filter((u) => u.includes(root.secret))).toEqual([])
    await w.context.close()
  })

  it('drills down by a row, recomputes the tiles, keeps the view in the URL and removes the filter by its chip', { timeout: 90_000 }, async () => {
    const w = await watchedPage(browser!, base)
    await w.page.goto(`${base}/?project=${U}&range=30d#client=${root.id}:${root.secret}`)
    let n = await complete(w.page)
    await w.page.getByRole('tab', { name: 'Countries' }).click()
    await w.page.waitForSelector('[data-route="country"][data-state="ready"]')
    const countries = h.data.breakdown(U, 'country', W30).filter((r) => r.name !== null)
    const country = countries[0]!.name!
    await w.page.locator('[data-route="country"]').getByRole('button', { name: country, exact: true }).click()
    n = await complete(w.page, n)

    const filters: Filter[] = [{ name: 'country', operator: 'is', value: [country] }]
    const url = new URL(w.page.url())
    expect(Object.fromEntries(url.searchParams)).toEqual({ project: U, range: '30d', filters: JSON.stringify(filters) })
    const filtered = h.data.metricValues(U, W30, filters)
    expect(filtered.total_sessions).toBeLessThan(h.data.metricValues(U, W30).total_sessions)
    expectTiles(await tiles(w.page), filtered, h.data.metricValues(U, before(W30), filters))
    await w.page.getByRole('button', { name: `Remove filter country is ${country}` }).waitFor()

    // The URL alone restores the view (the secret stays in this tab's sessionStorage).
    await w.page.reload()
    n = await complete(w.page)
    expectTiles(await tiles(w.page), filtered, h.data.metricValues(U, before(W30), filters))

    await w.page.getByRole('button', { name: `Remove filter country is ${country}` }).click()
    await complete(w.page, n)
    expect(new URL(w.page.url()).searchParams.has('filters')).toBe(false)
    expectTiles(await tiles(w.page), h.data.metricValues(U, W30), h.data.metricValues(U, before(W30)))
    expect(w.consoleErrors).toEqual([])
    expect(w.external).toEqual([])
    await w.context.close()
  })

  it('signs in a read client by the form, with the keyboard, and exports the window\'s events', { timeout: 90_000 }, async () => {
    const w = await watchedPage(browser!, base)
    await w.page.goto(`${base}/?project=${U}&range=7d`)
    await w.page.getByLabel('Client id').fill(read.id)
    await w.page.getByLabel('Client secret').fill(read.secret)
    await w.page.getByLabel('Client secret').press('Enter')
    const n = await complete(w.page)
    expectTiles(await tiles(w.page), h.data.metricValues(U, W7), h.data.metricValues(U, before(W7)))
    expect(await w.page.locator('select#project').count()).toBe(0)

    // Tabs move with the arrow keys.
    await w.page.getByRole('tab', { name: 'Countries' }).focus()
    await w.page.keyboard.press('ArrowRight')
    await w.page.waitForSelector('[data-route="region"][data-state="ready"]')
    const regions = h.data.breakdown(U, 'region', W7).slice(0, 10)
    expect(await tableOf(w.page, 'group-country')).toEqual(regions.map((r) => [r.name === null ? '(none)' : r.prefix ? `${r.name}, ${r.prefix}` : r.name, r.sessions.toLocaleString('en')]))

    // Every control has a name a screen reader can say.
    const unnamed = await w.page.$$eval('input, select, button', (els) =>
      els.filter((el) => !(el as HTMLInputElement).labels?.length && !el.getAttribute('aria-label') && !el.textContent?.trim()).map((el) => el.outerHTML),
    )
    expect(unnamed).toEqual([])

    await w.page.selectOption('#export-format', 'ndjson')
    const [download] = await Promise.all([w.page.waitForEvent('download'), w.page.click('#export')])
    const lines = readFileSync((await download.path())!, 'utf8').trim().split('\n')
    const expected = h.data.events.filter((e) => e.project_id === U && ms(e) >= W7.start && ms(e) < W7.end)
    expect(lines).toHaveLength(expected.length)
    expect(new Set(lines.map((l) => JSON.parse(l).id))).toEqual(new Set(expected.map((e) => e.id)))
    expect(n).toBeGreaterThan(0)

    // A read client is told no by /manage/projects (403), which is how the page knows it is one.
    expect(w.consoleErrors.filter((e) => !e.url.endsWith('/manage/projects'))).toEqual([])
    expect(w.external).toEqual([])
    expect(w.requests.filter((u) => u.includes(read.secret))).toEqual([])
    await w.context.close()
  })

  it('says what went wrong in the widget that got it: 401, 403, and 429 retried after its Retry-After', { timeout: 120_000 }, async () => {
    const w = await watchedPage(browser!, base)
    await w.page.goto(`${base}/?project=${U}#client=${root.id}:not-the-secret`)
    await w.page.getByRole('alert').filter({ hasText: 'refused' }).waitFor()
    expect(w.page.url()).toBe(`${base}/?project=${U}`)
    await expect(w.page.getByLabel('Client id').isVisible()).resolves.toBe(true)

    // A read client addressing another project: every widget says 403, the page stays.
    await w.page.goto(`${base}/?project=${PROJECTS.sthlm.id}#client=${read.id}:${read.secret}`)
    await complete(w.page)
    const states = await w.page.$$eval('[data-widget]', (els) => els.map((e) => `${e.getAttribute('data-state')} ${e.getAttribute('data-status')}`))
    expect(new Set(states)).toEqual(new Set(['error 403']))
    expect(await w.page.textContent('[data-widget="pages"] .error')).toContain('This client may not read this (403 project_forbidden)')
    expect(await w.page.locator('header.toolbar').isVisible()).toBe(true)
    await w.context.close()

    // Four requests per 10 s: the page needs nine, so some widgets wait for their Retry-After.
    limited = await listen(testApp(h.rt, { now: () => h.clock.now, config: { ...h.rt.config, QUARRY_RATE_LIMIT: 4 } }), '127.0.0.1', 0)
    const slow = `http://127.0.0.1:${limited.port}`
    const l = await watchedPage(browser!, slow)
    await l.page.goto(`${slow}/?project=${U}#client=${root.id}:${root.secret}`)
    const waiting = l.page.locator('[data-status="429"] .error').first()
    await waiting.waitFor()
    expect(await waiting.textContent()).toMatch(/^Too many requests \(429\): the rate limit was reached\. Retrying in \d+ s\.$/)
    await l.page.waitForFunction(() => [...document.querySelectorAll('[data-widget]')].every((e) => e.getAttribute('data-state') === 'ready'), null, { timeout: 90_000 })
    expectTiles(await tiles(l.page), h.data.metricValues(U, W30), h.data.metricValues(U, before(W30)))
    await l.context.close()
  })

  it('reads in a narrow window and in the dark colour scheme', { timeout: 60_000 }, async () => {
    const w = await watchedPage(browser!, base, { viewport: { width: 390, height: 844 }, colorScheme: 'dark' })
    await w.page.goto(`${base}/?project=${U}&range=30d#client=${root.id}:${root.secret}`)
    await complete(w.page)
    const { scrollWidth, clientWidth, background } = await w.page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
      background: getComputedStyle(document.body).backgroundColor,
    }))
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth)
    // The dark palette's background, not the light one.
    expect(background).toBe('rgb(15, 18, 22)')
    await w.page.screenshot({ path: SCREENSHOT.replace(/\.png$/, '-narrow-dark.png'), fullPage: true })
    expect(w.consoleErrors).toEqual([])
    await w.context.close()
  })
})
