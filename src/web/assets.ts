import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const CLIENT = join(dirname(fileURLToPath(import.meta.url)), 'client')

export interface Asset {
  body: Uint8Array<ArrayBuffer>
  contentType: string
  etag: string
}

/** The explorer: its page and its assets, served under names that change whenever their bytes do. */
export interface ExplorerAssets {
  page: Asset
  /** Keyed by the hashed file name under /assets/. */
  files: ReadonlyMap<string, Asset>
}

/** What the page needs to know about the API it explores, read from the server's own declarations. */
export interface ExplorerFacts {
  ranges: readonly string[]
  exportFormats: readonly string[]
}

const hash = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('base64url').slice(0, 16)

function asset(bytes: Uint8Array, contentType: string): Asset {
  const body = new Uint8Array(bytes)
  return { body, contentType, etag: `"${hash(body)}"` }
}

const escapeAttribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')

/**
 * Bundles src/web/client with esbuild (an npm package, so nothing is fetched at build time) when
 * the server starts: the page runs only code this process built from its own tree.
 */
async function bundle(): Promise<{ js: Uint8Array; css: Uint8Array }> {
  const { build } = await import('esbuild')
  const result = await build({
    entryPoints: [join(CLIENT, 'main.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
    legalComments: 'none',
  })
  const js = result.outputFiles[0]?.contents
  if (!js) throw new Error('explorer: esbuild produced no output')
  const css = new Uint8Array(await readFile(join(CLIENT, 'style.css')))
  return { js, css }
}

function page(facts: ExplorerFacts, script: string, style: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<title>Quarry explorer</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/${style}">
<script type="module" src="/assets/${script}"></script>
</head>
<body data-ranges="${escapeAttribute(facts.ranges.join(','))}" data-export-formats="${escapeAttribute(facts.exportFormats.join(','))}">
<main id="app" aria-live="polite"><p class="boot">Loading the explorer…</p></main>
<noscript><p>The explorer needs JavaScript. The API itself is described at <a href="/docs">/docs</a>.</p></noscript>
</body>
</html>
`
}

export async function buildExplorer(facts: ExplorerFacts): Promise<ExplorerAssets> {
  const { js, css } = await bundle()
  const script = asset(js, 'text/javascript; charset=utf-8')
  const style = asset(css, 'text/css; charset=utf-8')
  const scriptName = `app.${script.etag.slice(1, -1)}.js`
  const styleName = `app.${style.etag.slice(1, -1)}.css`
  const html = new TextEncoder().encode(page(facts, scriptName, styleName))
  return {
    page: asset(html, 'text/html; charset=utf-8'),
    files: new Map([
      [scriptName, script],
      [styleName, style],
    ]),
  }
}
