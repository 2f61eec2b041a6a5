// Runs statements with the engine's trace log on, in a process of its own: chDB writes its log to
// the process's stderr from native threads, where only a parent can collect it.
// Reads a JSON job on stdin: { dir, database, statements: [{ sql, params }] }. Writes one JSON line
// per statement on stdout ({ elapsedS }, the engine's own figure); the rows are discarded.
import { Session } from 'chdb'

const job = JSON.parse(await new Promise((resolve) => {
  let text = ''
  process.stdin.on('data', (d) => (text += d))
  process.stdin.on('end', () => resolve(text))
}))

const session = new Session(job.dir)
try {
  await session.queryAsync(`USE ${job.database}`)
  for (const { sql, params } of job.statements) {
    const body = sql.replace(/\s+FORMAT \w+\s*$/, '')
    const settings = /\nSETTINGS [^\n]*$/.test(body) ? ", send_logs_level = 'trace'" : "\nSETTINGS send_logs_level = 'trace'"
    const result = await session.queryBindAsync(`${body}${settings}\nFORMAT Null`, params)
    process.stdout.write(`${JSON.stringify({ elapsedS: result.elapsed })}\n`)
  }
} finally {
  session.close()
}
