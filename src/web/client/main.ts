import { credentialsFromFragment, describeFailure, getJson, storeCredentials, storedCredentials, type Credentials } from './api.ts'
import { renderDashboard, stopDashboard } from './dashboard.ts'
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
  // Every widget that got a 401 asks; the first one signs out.
  if (!storedCredentials() && root.querySelector('form.sign-in')) return
  stopDashboard()
  storeCredentials(null)
  signIn(notice)
}

/**
 * A root client lists its organization's projects; a read client is refused (403) and reads its
 * own. With the project already in the URL the widgets start at once, beside that listing.
 */
async function start(credentials: Credentials): Promise<void> {
  root.replaceChildren(h('p', { className: 'boot' }, 'Signing in…'))
  const listing = getJson<{ data: ProjectInfo[] }>('/manage/projects', credentials)
  const projects = listing.then((answer) => (answer.ok ? answer.body.data : null))
  let view = readView(location.search)
  if (!view.project) {
    const answer = await listing
    if (answer.ok) {
      view = { ...view, project: answer.body.data[0]?.id ?? null }
      if (!view.project) return signOut("This root client's organization has no project yet (quarry projects create).")
      history.replaceState(null, '', writeView(view))
    } else if (answer.status === 403) {
      return signIn('This is a read client: name its project.', true)
    } else {
      return signOut(describeFailure(answer))
    }
  }
  const show = (next: View, push: boolean) => {
    if (push) history.pushState(null, '', writeView(next))
    void renderDashboard(root, { view: next, credentials, projects, navigate: (v) => show(v, true), signOut })
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
