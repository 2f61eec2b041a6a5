import type { Credentials } from './api.ts'
import { h } from './dom.ts'

export interface SignInOptions {
  /** Why the form is shown again (a refused secret, a read client without its project). */
  notice?: string
  project: string | null
  askProject?: boolean
  onSubmit: (credentials: Credentials, project: string | null) => void
}

/** Client id and secret, kept in this tab's sessionStorage only and sent as headers. */
export function renderSignIn(root: HTMLElement, options: SignInOptions): void {
  const id = h('input', { id: 'client-id', name: 'client-id', autocomplete: 'username', required: true, spellcheck: 'false', size: 38 })
  const secret = h('input', { id: 'client-secret', name: 'client-secret', type: 'password', autocomplete: 'current-password', required: true, size: 38 })
  const project = h('input', { id: 'sign-in-project', name: 'project', value: options.project ?? '', spellcheck: 'false', size: 38 })
  const form = h(
    'form',
    { className: 'sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title' }, 'Quarry explorer'),
    h('p', {}, 'Sign in with a read or root client. The secret stays in this tab (sessionStorage) and is sent only as a request header.'),
    options.notice ? h('p', { className: 'error', role: 'alert' }, options.notice) : null,
    h('label', { for: 'client-id' }, 'Client id'),
    id,
    h('label', { for: 'client-secret' }, 'Client secret'),
    secret,
    h('label', { for: 'sign-in-project' }, 'Project ', h('span', { className: 'muted' }, options.askProject ? '(required for a read client)' : '(optional for a root client)')),
    project,
    h('button', { type: 'submit' }, 'Sign in'),
    h('p', { className: 'muted' }, 'A link of the form /#client=<id>:<secret> signs in at once; quarry prints one for the demo client.'),
  )
  // No action and no method: the form never submits to the server, so the secret never lands in a URL.
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    options.onSubmit({ id: id.value.trim(), secret: secret.value.trim() }, project.value.trim() || null)
  })
  root.replaceChildren(form)
  ;(options.askProject && id.value ? project : id).focus()
}
