/**
 * The declarations every list is derived from, held to the tables they describe (read from
 * system.columns of a migrated engine) and to the lists derived from them: a column added to the
 * table but not declared, a derived list naming what is not declared, or a declared column missing
 * where its declaration puts it, fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IMPORT_COLUMNS, IMPORT_SPECS } from '../src/import/event-row.ts'
import { NUMERIC_PROPERTY_COLUMNS } from '../src/query/charts.ts'
import { DIMENSIONS } from '../src/query/dimensions.ts'
import { EVENT_COLUMNS, EVENTS_TABLE, findEventColumn, INCLUDE_NAMES, JOINED_FIELDS } from '../src/query/event-columns.ts'
import { DEFAULT_FIELDS, INCLUDE_GROUPS, outputKeys } from '../src/query/export-events.ts'
import { EXPORT_FORMAT_NAMES, EXPORT_FORMATS, isStreamed } from '../src/query/export-formats.ts'
import { openTestRuntime, type TestRuntime } from './helpers/runtime.ts'

let rt: TestRuntime
let events: { name: string; type: string }[]
let sessions: string[]

const columnsOf = (table: string) =>
  rt.runner.rows<{ name: string; type: string }>(
    {
      name: 'test',
      sql: 'SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = {table:String} ORDER BY position',
      params: { table },
    },
    { timeoutS: 30 },
  )

beforeAll(async () => {
  rt = await openTestRuntime()
  events = await columnsOf('events')
  sessions = (await columnsOf('sessions')).map((c) => c.name)
})
afterAll(async () => {
  await rt?.dispose()
})

const FIELDS = [...EVENTS_TABLE.map((c) => c.export), ...JOINED_FIELDS]
const ALL_KEYS = outputKeys(new Set(FIELDS.map((f) => f.key)))
const declared = new Set(EVENTS_TABLE.map((c) => c.name))

describe('the events columns', () => {
  it('are the table columns, in table order, with their ClickHouse types', () => {
    expect(EVENTS_TABLE.map((c) => [c.name, c.type])).toEqual(events.map((c) => [c.name, c.type]))
  })

  it('filters and breakdowns name every column but a map or a list, by its name and its export key, as its type compares', () => {
    const comparable = events.filter((c) => !c.type.startsWith('Map(') && !c.type.startsWith('Array('))
    expect(EVENT_COLUMNS.map(([name]) => name)).toEqual(comparable.map((c) => c.name))
    for (const c of EVENTS_TABLE) {
      const found = findEventColumn(c.name)
      expect(found, c.name).toEqual(c.kind ? { column: c.name, kind: c.kind } : undefined)
      expect(findEventColumn(c.export.key), c.export.key).toEqual(found)
      if (c.kind === 'number') expect(c.type, c.name).toMatch(/^(Nullable\()?(U?Int|Float)\d+/)
      expect(c.float32, c.name).toBe(c.type.includes('Float32'))
      expect(c.nullable, c.name).toBe(c.type.startsWith('Nullable('))
    }
    expect(NUMERIC_PROPERTY_COLUMNS).toEqual(EVENTS_TABLE.filter((c) => c.kind === 'number').map((c) => c.name))
  })

  it('the importer takes every column, under its name and its export key', () => {
    expect(IMPORT_COLUMNS).toEqual(EVENTS_TABLE.map((c) => [c.name, c.import]))
    expect(IMPORT_SPECS.map((s) => [s.column, new Set(s.names)])).toEqual(EVENTS_TABLE.map((c) => [c.name, new Set([c.name, c.export.key])]))
  })
})

describe('the export fields', () => {
  it('are every column, at the place each declares, then the joins', () => {
    expect([...ALL_KEYS].sort()).toEqual(FIELDS.map((f) => f.key).sort())
    expect(new Set(ALL_KEYS).size).toBe(events.length + JOINED_FIELDS.length)
    expect(EVENTS_TABLE.map((c) => c.exportAt).sort((a, b) => a - b)).toEqual(EVENTS_TABLE.map((_, i) => i))
    for (const c of EVENTS_TABLE) expect(ALL_KEYS.indexOf(c.export.key), c.name).toBe(c.exportAt)
    expect(ALL_KEYS.slice(EVENTS_TABLE.length)).toEqual(JOINED_FIELDS.map((f) => f.key))
    for (const f of FIELDS) for (const c of f.columns) expect(declared.has(c), `${f.key} reads ${c}`).toBe(true)
  })

  it('the default object is the fields declared default, in output order', () => {
    expect(DEFAULT_FIELDS).toEqual(ALL_KEYS.filter((k) => FIELDS.find((f) => f.key === k)!.group === 'default'))
  })

  it('each include name adds its group and its field, and every other field can be included', () => {
    expect(Object.keys(INCLUDE_GROUPS)).toEqual([...INCLUDE_NAMES])
    for (const [name, keys] of Object.entries(INCLUDE_GROUPS)) {
      expect(keys.length, name).toBeGreaterThan(0)
      expect(keys, name).toEqual(ALL_KEYS.filter((k) => keys.includes(k)))
      for (const f of FIELDS.filter((f) => f.group === name || f.key === name)) expect(keys, name).toContain(f.key)
    }
    const includable = new Set(Object.values(INCLUDE_GROUPS).flat())
    for (const f of FIELDS) expect(f.group === 'default' || includable.has(f.key), f.key).toBe(true)
  })
})

describe('the export formats', () => {
  it('are formats ClickHouse writes, streamed as attachments or answered as a page', async () => {
    const sql = 'SELECT name FROM system.formats WHERE is_output'
    const outputs = new Set((await rt.runner.rows<{ name: string }>({ name: 'test', sql, params: {} }, { timeoutS: 30 })).map((f) => f.name))
    expect(EXPORT_FORMAT_NAMES).toEqual(Object.keys(EXPORT_FORMATS))
    expect(EXPORT_FORMAT_NAMES[0]).toBe('json')
    for (const name of EXPORT_FORMAT_NAMES) {
      const format = EXPORT_FORMATS[name]
      expect(outputs.has(format.clickhouse), name).toBe(true)
      expect(isStreamed(name), name).toBe(format.streams)
      expect(format.contentType, name).toMatch(/^[a-z]+\/[a-z.-]+(; charset=utf-8)?$/)
    }
  })
})

describe('the dimensions', () => {
  it('each names its sessions column (and prefix column), checked against the table', () => {
    for (const d of DIMENSIONS) {
      expect(sessions, d.name).toContain(d.column)
      if (d.prefix !== undefined) expect(sessions, d.name).toContain(d.prefix)
    }
  })
})
