/** Every read the service sends carries readonly=2: a write through the read path is refused by the server. */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeServer, openServerRuntime, type ServerRuntime } from './helpers.ts'

describeServer('readonly reads on a server', () => {
  let rt: ServerRuntime
  beforeAll(async () => {
    rt = await openServerRuntime('readonly')
  })
  afterAll(async () => {
    await rt?.dispose()
  })

  it('refuses INSERT, CREATE and DROP sent as reads, and changes nothing', async () => {
    const read = (sql: string) => rt.runner.rows({ name: 'attempt', sql, params: {} }, { timeoutS: 30 })
    await expect(read("INSERT INTO projects (id, organization_id, name) SELECT 'x', 'o', 'x'")).rejects.toThrow(/readonly/i)
    await expect(read('CREATE TABLE sneaky (a UInt8) ENGINE = Memory')).rejects.toThrow(/readonly/i)
    await expect(read('DROP TABLE events')).rejects.toThrow(/readonly/i)
    const [count] = await read('SELECT count() AS n FROM projects')
    expect(count).toEqual({ n: 0 })
    const tables = await read("SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN ('sneaky', 'events')")
    expect(tables).toEqual([{ name: 'events' }])
  })

  it('while the CLI path (readonly: false) may write', async () => {
    await rt.runner.command({ name: 'write', sql: "INSERT INTO projects (id, organization_id, name) SELECT 'w', 'o', 'w'", params: {} })
    const rows = await rt.runner.rows({ name: 'read', sql: 'SELECT id FROM projects FINAL', params: {} }, { timeoutS: 30 })
    expect(rows).toEqual([{ id: 'w' }])
  })
})
