/**
 * Collects the values of one statement. Code asks for a placeholder with a type it chooses;
 * the value travels to ClickHouse as a query parameter, never as SQL text.
 */
export class SqlParams {
  readonly values: Record<string, unknown>
  #next = 0

  /** `prefix` names this collection's placeholders apart from those of a statement it extends. */
  constructor(
    initial: Record<string, unknown> = {},
    readonly prefix = 'v',
  ) {
    this.values = { ...initial }
  }

  add(value: unknown, type: string): string {
    const name = `${this.prefix}${this.#next++}`
    this.values[name] = value
    return `{${name}:${type}}`
  }
}
