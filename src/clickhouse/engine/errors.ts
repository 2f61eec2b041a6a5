/** Failures of opening an engine that the CLI reports in one line, without a stack trace. */

export class DataDirectoryLockedError extends Error {
  constructor(readonly dir: string) {
    super(
      `the data directory ${dir} is locked by another process (is a Quarry server running on it?); ` +
        'stop that process or point QUARRY_DATA_DIR elsewhere',
    )
  }
}

/** chdb is an optional dependency: a server-mode install (npm ci --omit=optional) leaves it out. */
export class EmbeddedEngineMissingError extends Error {
  constructor() {
    super(
      'the embedded engine needs the optional package chdb, which is not installed ' +
        '(npm ci --omit=optional leaves it out): set CLICKHOUSE_URL to use a ClickHouse server, or install it with npm install chdb',
    )
  }
}
