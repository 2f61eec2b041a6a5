import { describeCost, describeFailure, type Answer } from './api.ts'
import { h, uid } from './dom.ts'

/** A widget's frame: a labelled region whose body is replaced by data or by the error it got. */
export interface Card {
  root: HTMLElement
  body: HTMLElement
}

export function card(title: string, name: string, ...actions: Node[]): Card {
  const id = uid('card')
  const body = h('div', { className: 'card-body' }, h('p', { className: 'muted' }, 'Loading…'))
  const root = h(
    'section',
    { className: `card card-${name}`, 'aria-labelledby': id, 'data-widget': name, 'data-state': 'loading' },
    h('header', { className: 'card-head' }, h('h2', { id }, title), ...actions, h('span', { className: 'cost', tabindex: 0, 'aria-label': 'query cost' })),
    body,
  )
  return { root, body }
}

type Ok<T> = Extract<Answer<T>, { ok: true }>

export interface FillOptions {
  /** Called when the server refused the credentials: the page goes back to signing in. */
  onSignedOut: () => void
}

/**
 * Draws one answer into a card. A 429 or 503 that says when to retry is retried then (up to a
 * minute away), while the rest of the page carries on; any failure is said in words in the card.
 */
export async function fill<T>(c: Card, request: () => Promise<Answer<T>>, render: (answer: Ok<T>) => void, options: FillOptions): Promise<void> {
  c.root.dataset.state = 'loading'
  const answer = await request()
  const cost = c.root.querySelector<HTMLElement>('.cost')!
  cost.textContent = answer.cost.serverTiming ? `${/db;dur=([\d.]+)/.exec(answer.cost.serverTiming)?.[1] ?? '?'} ms db` : `${answer.cost.ms.toFixed(0)} ms`
  cost.title = describeCost(answer.cost)
  if (answer.cost.serverTiming) cost.dataset.serverTiming = answer.cost.serverTiming
  if (answer.ok) {
    c.body.replaceChildren()
    render(answer)
    c.root.dataset.state = 'ready'
    delete c.root.dataset.status
    return
  }
  c.body.replaceChildren(h('p', { className: 'error', role: 'alert' }, describeFailure(answer)))
  c.root.dataset.state = 'error'
  c.root.dataset.status = String(answer.status)
  if (answer.status === 401) options.onSignedOut()
  if ((answer.status === 429 || answer.status === 503) && answer.retryAfter !== null && answer.retryAfter <= 60) {
    setTimeout(() => {
      if (c.root.isConnected) void fill(c, request, render, options)
    }, answer.retryAfter * 1000)
  }
}
