import { credentialsFromFragment, describeFailure, getJson, storeCredentials, storedCredentials, type Credentials } from './api.ts'
import { renderDashboard } from './dashboard.ts'
import { h } from './dom.ts'
import { renderSignIn } from './signin.ts'
import type { ProjectInfo } from './toolbar.ts'
import { readView, writeView, type View } from './view.ts'

const root = document.getElementById('app')!

function signIn(notice?: string, askProject = false) {
  const view = readView(location.search)
  renderSignIn(root, {
    notice,
    askProject,
    project: view.project,
    onSubmit: (credentials, project) => {
      storeCredentials(credentials)
      if (project !== view.project) history.replaceState(null, '', writeView({ ...view, project }))
      void start(credentials)
    },
  })
}

function signOut(notice?: string) {
  storeCredentials(null)
  signIn(notice)
}

/** A root client lists its organization's projects; a read client is refused (403) and reads its own. */
async function start(credentials: Credentials): Promise<void> {
  root.replaceChildren(h('p', { className: 'boot' }, 'Signing in…'))
  const answer = await getJson<{ data: ProjectInfo[] }>('/manage/projects', credentials)
  let view = readView(location.search)
  let projects: ProjectInfo[] | null = null
  if (answer.ok) {
    projects = answer.body.data
    if (!view.project || !projects.some((p) => p.id === view.project)) view = { ...view, project: projects[0]?.id ?? null }
    if (!view.project) return signOut('This root client\'s organization has no project yet (quarry projects create).')
    history.replaceState(null, '', writeView(view))
  } else if (answer.status === 401) {
    return signOut(describeFailure(answer))
  } else if (answer.status === 403) {
    if (!view.project) return signIn('This is a read client: name its project.', true)
  } else if (!view.project) {
    return signIn(describeFailure(answer), true)
  }
  const show = (next: View, push: boolean) => {
    if (push) history.pushState(null, '', writeView(next))
    void renderDashboard(root, {
      view: next,
      credentials,
      projects,
      navigate: (v) => show(v, true),
      signOut,
    })
  }
  window.onpopstate = () => show(readView(location.search), false)
  show(view, false)
}

function boot() {
  const fromLink = credentialsFromFragment(location.hash)
  if (fromLink) {
    storeCredentials(fromLink)
    // The secret must not stay in the address bar, the history or a bookmark.
    history.replaceState(null, '', location.pathname + location.search)
  }
  const credentials = fromLink ?? storedCredentials()
  if (credentials) void start(credentials)
  else signIn()
}

boot()
