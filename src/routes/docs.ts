import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { readFile } from 'node:fs/promises'
import { STATUS_CODES } from 'node:http'
import { fileURLToPath } from 'node:url'
import type { AppEnv } from '../app-env.ts'
import { ERROR_CODES } from '../http/error-codes.ts'
import { headersSet } from '../http/response-headers.ts'
import { describedHeaders } from './openapi-shared.ts'

// Scalar's standalone bundle, vendored (vendor/scalar/README.md): the npm package would bring 264
// packages for this one file, and the reference must render on machines without internet access.
// The try-it panel starts on the client credentials every API route takes (not /metrics' token).
const SCALAR_BUNDLE = fileURLToPath(new URL('../../vendor/scalar/standalone.js', import.meta.url))

const DOCS_PAGE = `<!doctype html>
<html>
  <head>
    <title>Quarry API reference</title>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <script id="api-reference" data-url="/openapi.json" data-configuration='{"withDefaultFonts":false,"authentication":{"preferredSecurityScheme":"clientId"}}'></script>
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

/** Headers the shared middleware (request id, statistics, rate limit, errors) sets, as components. */
const SHARED_HEADERS = describedHeaders(...headersSet('every', 'api', 'refusal'))
/** Those on every response, on every API response, and on a refusal (429, 503) besides. */
const SYSTEM_HEADERS = headersSet('every')
const API_HEADERS = headersSet('every', 'api')
const REFUSAL_HEADERS = headersSet('refusal')

const errorResponse = (status: number) => ({
  description: STATUS_CODES[status] ?? 'Error',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
})

/** explain=sql is answered by middleware on every API route, so the routes' schemas do not name it. */
const EXPLAIN_PARAMETER = {
  name: 'explain',
  in: 'query',
  required: false,
  description:
    'Root clients only: answer an `Explain` object ({sql, params}: the statements and bound parameters the request would run) instead of the data',
  schema: { type: 'string', enum: ['sql'] },
}
const EXPLAIN_SCHEMA = {
  type: 'object',
  description: 'The answer to explain=sql: each statement as sent, and the values bound to its {name:Type} placeholders',
  properties: {
    sql: { type: 'array', items: { type: 'string' } },
    params: { type: 'object', additionalProperties: true },
  },
  required: ['sql', 'params'],
}

type Operation = {
  parameters?: { name?: string; in?: string }[]
  responses?: Record<string, { description?: string; content?: unknown; headers?: Record<string, unknown> }>
}

/**
 * Adds what middleware, rather than a route, answers: its headers on every response, the
 * statuses any API route can return (414 from the URL limit, 500 from the error handler), and
 * the explain parameter.
 */
function withSharedResponses(doc: Record<string, unknown>) {
  const components = ((doc.components ??= {}) as Record<string, Record<string, unknown>>)
  components.headers = { ...SHARED_HEADERS, ...components.headers }
  components.schemas = { ...components.schemas, Explain: EXPLAIN_SCHEMA }
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Operation>>
  for (const [path, item] of Object.entries(paths)) {
    const api = path.startsWith('/insights/') || path.startsWith('/export/')
    for (const operation of Object.values(item)) {
      const responses = (operation.responses ??= {})
      if (api) {
        const parameters = (operation.parameters ??= [])
        if (!parameters.some((p) => p.name === 'explain' && p.in === 'query')) parameters.push(EXPLAIN_PARAMETER)
        responses['414'] ??= errorResponse(414)
        responses['500'] ??= errorResponse(500)
      }
      for (const [status, response] of Object.entries(responses)) {
        const names = [...(api ? API_HEADERS : SYSTEM_HEADERS), ...(status === '429' || status === '503' ? REFUSAL_HEADERS : [])]
        response.headers = {
          ...Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }])),
          ...response.headers,
        }
      }
    }
  }
  return doc
}

/** The OpenAPI 3.1 document, built from the zod schemas the routes validate with, and its rendering. */
export function mountDocs(app: OpenAPIHono<AppEnv>, version: string) {
  const registry = app.openAPIRegistry
  registry.registerComponent('securitySchemes', 'clientId', { type: 'apiKey', in: 'header', name: 'openpanel-client-id' })
  registry.registerComponent('securitySchemes', 'clientSecret', { type: 'apiKey', in: 'header', name: 'openpanel-client-secret' })
  registry.registerComponent('securitySchemes', 'basic', { type: 'http', scheme: 'basic', description: 'client id and secret as user and password' })

  // OpenPanel serves its reference and document at these paths; Quarry's are /docs and /openapi.json.
  registry.registerPath({
    method: 'get',
    path: '/documentation',
    summary: "The API reference (OpenPanel's path; also at /docs)",
    tags: ['system'],
    responses: { 200: { description: 'The reference page', content: { 'text/html': { schema: { type: 'string' } } } } },
  })
  registry.registerPath({
    method: 'get',
    path: '/documentation/json',
    summary: "This OpenAPI document (OpenPanel's path; also at /openapi.json)",
    tags: ['system'],
    responses: { 200: { description: 'The OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } } } },
  })

  let document: Record<string, unknown> | undefined
  const openapi = (c: Context) => {
    // A copy: the generator may hand back objects the route definitions still hold.
    document ??= withSharedResponses(
      structuredClone(app.getOpenAPI31Document({
        openapi: '3.1.0',
        info: { title: 'Quarry', version, description },
        tags: [
          { name: 'insights', description: 'Aggregates for one project' },
          { name: 'export', description: 'Raw events and chart series' },
          { name: 'system', description: 'Health' },
        ],
      })) as unknown as Record<string, unknown>,
    )
    return c.json(document)
  }
  app.get('/openapi.json', openapi)
  app.get('/documentation/json', openapi)
  app.get('/docs', (c) => c.html(DOCS_PAGE))
  app.get('/documentation', (c) => c.html(DOCS_PAGE))
  let bundle: Promise<Buffer> | undefined
  app.get('/docs/scalar.js', async (c) => {
    bundle ??= readFile(SCALAR_BUNDLE)
    c.header('Cache-Control', 'public, max-age=86400')
    return c.body(new Uint8Array(await bundle), 200, { 'Content-Type': 'text/javascript; charset=utf-8' })
  })
}
