/**
 * A streaming CSV reader (RFC 4180, as ClickHouse and spreadsheets write it): comma-separated,
 * fields optionally in double quotes with "" for a quote, line breaks inside quotes, LF or CRLF.
 * An unquoted \N is ClickHouse's NULL. Records carry the line they start on (1-based).
 */

export type CsvItem = { line: number; cells: (string | null)[] } | { line: number; error: string }

export async function* readCsv(chunks: AsyncIterable<string>): AsyncGenerator<CsvItem> {
  let cells: (string | null)[] = []
  let field = ''
  let quoted = false // the current field started with a quote
  let inQuotes = false
  let quotePending = false // a quote inside quotes: "" or the closing one, decided by the next char
  let line = 1
  let recordLine = 1
  let fieldStarted = false

  const endField = () => {
    cells.push(!quoted && field === '\\N' ? null : field)
    field = ''
    quoted = false
    fieldStarted = false
  }
  const endRecord = (): CsvItem | undefined => {
    endField()
    const record = cells
    cells = []
    const blank = record.length === 1 && record[0] === ''
    return blank ? undefined : { line: recordLine, cells: record }
  }

  for await (const chunk of chunks) {
    let start = 0 // first char of chunk not yet copied into `field`
    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk.charCodeAt(i)
      if (quotePending) {
        quotePending = false
        if (ch === 34) {
          // "" inside quotes: one quote; the second one is copied with the run.
          start = i
          continue
        }
        inQuotes = false
        start = i
      }
      if (inQuotes) {
        if (ch === 34) {
          field += chunk.slice(start, i)
          quotePending = true
          start = i + 1
        } else if (ch === 10) line++
        continue
      }
      if (ch === 44 /* , */ || ch === 10 /* \n */ || ch === 13 /* \r */) {
        field += chunk.slice(start, i)
        start = i + 1
        if (ch === 44) endField()
        else if (ch === 10) {
          const record = endRecord()
          if (record) yield record
          line++
          recordLine = line
        }
        // \r: dropped (CRLF ends a record at its \n)
        continue
      }
      if (ch === 34 && !fieldStarted && field === '' && start === i) {
        quoted = true
        inQuotes = true
        fieldStarted = true
        start = i + 1
        continue
      }
      fieldStarted = true
    }
    field += chunk.slice(start)
  }
  if (quotePending) inQuotes = false
  if (inQuotes) {
    yield { line: recordLine, error: `a quoted field opened on line ${recordLine} never closes` }
    return
  }
  if (field !== '' || cells.length > 0 || quoted) {
    const record = endRecord()
    if (record) yield record
  }
}
