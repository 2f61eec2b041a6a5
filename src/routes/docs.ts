import type { OpenAPIHono } from '@hono/zod-openapi'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { AppEnv } from '../app-env.ts'
import { ERROR_CODES } from '../http/error-codes.ts'

const require = createRequire(import.meta.url)
// Served from the package itself: the reference must render on machines without internet access.
const SCALAR_BUNDLE = require.resolve('@scalar/api-reference/browser/standalone.js')

const DOCS_PAGE = `<!doctype html>
<html>
  <head>
    <title>Quarry API reference</title>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <script id="api-reference" data-url="/openapi.json"></script>
    <script src="/docs/scalar.js"></script>
  </body>
</html>`

const description = [
  'Per-project analytics over ClickHouse, wire-compatible with OpenPanel\'s Insights and Export API.',
  '',
  'Every error is `{status, error, code, message, details?, requestId}`. Codes:',
  '',
  ...Object.entries(ERROR_CODES).map(([code, meaning]) => `- \`${code}\`: ${meaning}`),
].join('\n')

/** The OpenAPI 3.1 document, built from the zod schemas the routes validate with, and its rendering. */
export function mountDocs(app: OpenAPIHono<AppEnv>, version: string) {
  const registry = app.openAPIRegistry
  registry.registerComponent('securitySchemes', 'clientId', { type: 'apiKey', in: 'header', name: 'openpanel-client-id' })
  registry.registerComponent('securitySchemes', 'clientSecret', { type: 'apiKey', in: 'header', name: 'openpanel-client-secret' })
  registry.registerComponent('securitySchemes', 'basic', { type: 'http', scheme: 'basic', description: 'client id and secret as user and password' })

  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: { title: 'Quarry', version, description },
    tags: [
      { name: 'insights', description: 'Aggregates for one project' },
      { name: 'export', description: 'Raw events and chart series' },
      { name: 'system', description: 'Health' },
    ],
  })
  app.get('/docs', (c) => c.html(DOCS_PAGE))
  let bundle: Promise<Buffer> | undefined
  app.get('/docs/scalar.js', async (c) => {
    bundle ??= readFile(SCALAR_BUNDLE)
    c.header('Cache-Control', 'public, max-age=86400')
    return c.body(new Uint8Array(await bundle), 200, { 'Content-Type': 'text/javascript; charset=utf-8' })
  })
}
