/**
 * The house's rules, read from the source: dependencies flow one way (routes → query/services →
 * clickhouse), the layers below never import the HTTP ones, and no source file holds two jobs'
 * worth of lines. The import graph is read from the files' own import lines.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  )
}

const FILES = sourceFiles(SRC)
const IMPORT = /^(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/gm

/** The folder under src/ a file belongs to ('' for the files at the top). */
const folderOf = (file: string) => {
  const rel = relative(SRC, file).split('/')
  return rel.length > 1 ? rel[0]! : ''
}

/** Every relative import between files of src/, as [importing file, imported file], both relative to src/. */
const EDGES: [string, string][] = FILES.flatMap((file) =>
  [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m): [string, string] => [relative(SRC, file), relative(SRC, resolve(dirname(file), m[1]!))]),
)

const importsFrom = (from: string, to: readonly string[]) =>
  EDGES.filter(([a, b]) => folderOf(join(SRC, a)) === from && to.includes(folderOf(join(SRC, b)))).map(([a, b]) => `${a} -> ${b}`)

describe('dependencies flow one way', () => {
  it('finds the source files and their imports', () => {
    expect(FILES.length).toBeGreaterThan(50)
    expect(EDGES.some(([a, b]) => a === 'routes/insights.ts' && b === 'query/insights.ts')).toBe(true)
  })

  it('query/ imports nothing from http/, routes/, services/, auth/ or cli/', () => {
    expect(importsFrom('query', ['http', 'routes', 'services', 'auth', 'cli'])).toEqual([])
  })

  it('services/ imports nothing from http/, routes/ or cli/', () => {
    expect(importsFrom('services', ['http', 'routes', 'cli'])).toEqual([])
  })

  it('clickhouse/ imports nothing from the layers above it', () => {
    expect(importsFrom('clickhouse', ['query', 'services', 'http', 'routes', 'auth', 'cli', 'seed', 'import'])).toEqual([])
  })

  it('http/ imports nothing from routes/, auth/ or cli/', () => {
    expect(importsFrom('http', ['routes', 'auth', 'cli'])).toEqual([])
  })

  it('no two folders import each other', () => {
    const pairs = new Set(EDGES.map(([a, b]) => `${folderOf(join(SRC, a))}>${folderOf(join(SRC, b))}`))
    const cycles = [...pairs].filter((p) => {
      const [a, b] = p.split('>')
      return a !== b && a !== '' && b !== '' && pairs.has(`${b}>${a}`)
    })
    expect(cycles).toEqual([])
  })
})

describe('one job per file', () => {
  it('no source file passes 300 lines', () => {
    const long = FILES.map((f) => [relative(SRC, f), readFileSync(f, 'utf8').split('\n').length - 1] as const).filter(([, n]) => n > 300)
    expect(long).toEqual([])
  })
})
