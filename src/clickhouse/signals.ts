/** Aborts when any of the signals does; `done` detaches it from them. */
export function linkedSignal(signals: (AbortSignal | undefined)[]): { signal: AbortSignal; done(): void } {
  const controller = new AbortController()
  const present = signals.filter((s): s is AbortSignal => s !== undefined)
  const onAbort = () => controller.abort()
  for (const s of present) {
    if (s.aborted) controller.abort()
    else s.addEventListener('abort', onAbort, { once: true })
  }
  return { signal: controller.signal, done: () => present.forEach((s) => s.removeEventListener('abort', onAbort)) }
}
