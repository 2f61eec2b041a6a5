import { CLIENT_TYPES, createClientRow, listClients, revokeClient, type ClientType } from '../auth/clients.ts'
import { findProject } from '../projects.ts'
import type { Runtime } from '../runtime.ts'
import { CommandError, parse, UsageError } from './usage.ts'
import { baseUrlOf, explorerLink } from '../web/link.ts'

export async function clientsCommand(args: string[], open: () => Promise<Runtime>): Promise<void> {
  const [sub, ...rest] = args
  if (sub === 'list') {
    parse(rest, {})
    const rt = await open()
    try {
      for (const c of await listClients(rt.runner)) process.stdout.write(`${JSON.stringify(c)}\n`)
    } finally {
      await rt.close()
    }
    return
  }
  if (sub === 'revoke') {
    const { positionals } = parse(rest, {}, 1)
    const id = positionals[0]
    if (!id) throw new UsageError('clients revoke needs a client id')
    const rt = await open()
    try {
      if (!(await revokeClient(rt.runner, id))) throw new CommandError(`no client ${id}`)
      process.stdout.write(`${JSON.stringify({ id, revoked: true })}\n`)
    } finally {
      await rt.close()
    }
    return
  }
  if (sub !== 'create') throw new UsageError(`unknown clients command: ${sub ?? '(none)'}`)
  const { values } = parse(rest, {
    type: { type: 'string' },
    project: { type: 'string' },
    organization: { type: 'string' },
    name: { type: 'string' },
  })
  const type = values.type as ClientType | undefined
  if (!type || !CLIENT_TYPES.includes(type)) throw new UsageError('--type must be read, write or root')
  if (type !== 'root' && !values.project) throw new UsageError(`a ${type} client needs --project`)
  const rt = await open()
  try {
    let organizationId = values.organization ?? 'default'
    let projectId: string | null = null
    if (values.project) {
      const project = await findProject(rt.runner, values.project)
      if (!project) throw new CommandError(`no project ${values.project}; create it with: quarry projects create ${values.project}`)
      if (values.organization && values.organization !== project.organization_id) {
        throw new CommandError(`project ${project.id} belongs to organization ${project.organization_id}, not ${values.organization}`)
      }
      organizationId = project.organization_id
      projectId = type === 'root' ? null : project.id
    }
    const { id, secret } = await createClientRow(rt.runner, { type, projectId, organizationId, name: values.name ?? '' })
    process.stdout.write(`${JSON.stringify({ id, secret, type, projectId, organizationId })}\n`)
    // On stderr, so stdout stays one JSON line for scripts; write clients cannot read, so get none.
    if (type !== 'write') process.stderr.write(`Explorer (this link signs in): ${explorerLink(baseUrlOf(rt.config), { id, secret }, projectId)}\n`)
  } finally {
    await rt.close()
  }
}
